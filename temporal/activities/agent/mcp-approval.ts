/**
 * `requestMcpApproval`: an agent step's destructive MCP tool call waits for the owner's decision (decision 0410). The
 * workflow holds the wait; this activity lists the approval in the inbox and marks the step waiting. The message names
 * the server, the tool and the arguments — as JSON, cut to a size an inbox can show — read here from the transcript,
 * so they never travel through Temporal's history. A thread turn's approval is also a message of its conversation
 * (db/thread-approvals.ts), written first: a follower that reads the conversation on the step's `step.waiting` finds it.
 */
import { markAgentWaiting } from '../../../db/step-waits';
import { putApprovalAsked } from '../../../db/thread-approvals';
import type { AgentActivityDeps } from './call-model';
import { recordedToolCall } from './recorded-call';
import type { RequestMcpApprovalInput } from './types';

/** Characters of the arguments' JSON the approval message shows (the whole call is in the transcript). */
export const APPROVAL_ARGS_MAX_CHARS = 1000;

const INSTRUCTIONS =
  'An agent asks to call a tool marked destructive (by its server or by you). Approve: the call is made, once. ' +
  'Reject: it is not made, and the agent is told you declined.';

/** The arguments as data: JSON, cut with a note of the full length. */
export function shownArguments(args: unknown, invalid?: string): string {
  const json = invalid !== undefined ? JSON.stringify(invalid) : JSON.stringify(args ?? {});
  if (json.length <= APPROVAL_ARGS_MAX_CHARS) return json;
  return `${json.slice(0, APPROVAL_ARGS_MAX_CHARS)}… (${json.length} characters in all)`;
}

export function createMcpApprovalActivities(deps: Pick<AgentActivityDeps, 'db'>) {
  async function requestMcpApproval(req: RequestMcpApprovalInput): Promise<void> {
    const call = await recordedToolCall(deps.db, req);
    const args = shownArguments(call.args, call.invalid_args);
    const waited = { transcript_seq: req.assistant_seq, index: req.call_index, name: call.name };
    const now = new Date();
    await putApprovalAsked(deps.db, req, call, now);
    await markAgentWaiting(deps.db, req.run_id, req.step_id, waited, {
      message: `Call MCP tool "${req.tool}" on server "${req.server_name}" with arguments ${args}?`,
      instructions: INSTRUCTIONS,
      waiting_since: now.toISOString(),
      deadline: null,
    });
  }
  return { requestMcpApproval };
}
