/**
 * Every `patched()` id of the run workflow, in one place, each with what it changed and when it can go. Temporal's
 * lifecycle (temporalio/samples-typescript `patching-api/`): `patched(id)` while runs recorded without the marker may
 * still replay; `deprecatePatch(id)` (and only the new branch kept) once no such run is open or will be queried;
 * the call removed once no run recorded with the patched branch but before the deprecation is open.
 *
 * "Open" means: still running, or closed but inside the namespace's retention (a query or a reset replays it). The
 * schedule for each id is in docs/decisions/0120-patch-lifecycle.md; the replay test over test/temporal/histories/
 * holds a history of each branch until the branch is removed.
 */

/** `transform` steps run as local activities, not regular ones (./step.ts). */
export const PURE_STEPS_LOCAL = 'pure-steps-local';

/**
 * A line of `transform` steps in one local activity (./legacy-pure-lines.ts). Superseded by STEP_PER_ACTIVITY: new
 * runs never form a line; only histories recorded between the two replay one.
 */
export const PURE_LINES = 'pure-lines';

/** New runs run each step in its own activity: no line of pure steps (./legacy-pure-lines.ts). */
export const STEP_PER_ACTIVITY = 'step-per-activity';

/** The model call activity records an agent step's start and completion, not two projection local activities. */
export const AGENT_PROJECTIONS = 'agent-projections';

/** Model calls reserved in workflow state before they are scheduled (./budget.ts, ./budget-share.ts). */
export const BUDGET_RESERVATIONS = 'budget-reservations';

/** The run's deadline as a workflow timer, so the workflow records its own timeout (./deadline.ts). */
export const RUN_DEADLINE_TIMER = 'run-deadline-timer';

/**
 * A destructive MCP tool call waits for the owner's decision in the approvals inbox (./agent-step.ts, decision 0410);
 * runs recorded before it had the call refused by the callMcpTool activity.
 */
export const MCP_TOOL_APPROVAL = 'mcp-tool-approval';
