/**
 * The action type names (`step_type: action`): shared by the API, the database layer, the run snapshot and the
 * action catalog (domain/actions/catalog.ts declares each; temporal/actions/registry.ts binds each name to its code).
 * Workflow-safe: constants only.
 */
export const ACTION_TYPES = ['send_email', 'http_request', 'transform', 'delay', 'approval'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
