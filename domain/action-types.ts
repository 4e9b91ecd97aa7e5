/**
 * The action type names (`step_type: action`), for the API, the database layer and the run snapshot. They derive from
 * the declarations (domain/actions/declarations.ts) through the catalog; temporal/actions/registry.ts binds the
 * names the worker performs to code.
 */
export { ACTION_TYPES, type ActionType } from './actions/catalog';
