/**
 * Threads over MCP (docs/mcp.md "Threads"): `send_thread_message` posts a message through the same command as
 * `POST /api/v1/threads/:id/messages` (on a new thread when no id is given) and answers the turn as it stands after a
 * bounded wait; `get_thread_turn` answers it again later. A turn is a run, so its state is told as a run's task is
 * (./tasks.ts): `completed` with the reply, `input_required` naming the approvals it waits for and how to answer them
 * (`decide_approval`), `working` while it runs, and a tool error saying how a turn that did not complete ended.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { findReply, findUserMessage, publicMessageId } from '../../db/thread-messages';
import { findOwnThread } from '../../db/threads';
import { isId } from '../../db/ids';
import { TERMINAL_RUN_STATUSES } from '../../domain/run';
import { NotFoundError } from '../http/errors';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { jsonResult, toolError } from './results';
import { readRun } from './runs';
import { taskStatusOf } from './tasks';

/** One status read's long poll inside the tool's wait: short, so a wait for approval is seen soon after it starts. */
const READ_WAIT_SECONDS = 5;
const PAUSE_MS = 200;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The caller's thread, or a 404 (another user's thread is unknown). */
export async function ownThreadId(deps: ApiDeps, caller: McpCaller, threadId: string): Promise<string> {
  const doc = isId('thr', threadId) ? await findOwnThread(deps.db, caller.ownerId, threadId) : null;
  if (!doc) throw new NotFoundError(`thread ${threadId} not found`);
  return doc._id;
}

/**
 * Turn `turn` of the thread as a tool result, after waiting up to `waitSeconds` for it to end or to wait for an
 * approval.
 */
export async function turnAnswer(
  deps: ApiDeps,
  caller: McpCaller,
  threadId: string,
  turn: number,
  waitSeconds: number,
): Promise<CallToolResult> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const message = await findUserMessage(deps.db, threadId, turn);
    if (!message) throw new NotFoundError(`turn ${turn} of thread ${threadId} not found`);
    const base = { thread_id: threadId, turn, message_id: publicMessageId(message), run_id: message.run_id ?? null };
    const status = message.status ?? 'completed';
    if ((TERMINAL_RUN_STATUSES as readonly string[]).includes(status)) {
      if (status === 'completed') {
        const reply = await findReply(deps.db, threadId, turn);
        return jsonResult({
          ...base,
          status: 'completed',
          reply: reply?.text ?? null,
          reply_id: reply ? publicMessageId(reply) : null,
          next: `Send the next message with send_thread_message and thread_id "${threadId}".`,
        });
      }
      const why = message.error ? `: ${message.error.message}` : '';
      return toolError(`turn ${turn} of thread ${threadId} ${status.replace('_', ' ')}${why}`, { ...base, status });
    }
    const remaining = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    if (status !== 'queued' && message.run_id) {
      const wait =
        remaining > 0 ? { waitSeconds: Math.min(remaining, READ_WAIT_SECONDS), until: 'change' as const } : {};
      const run = await readRun(deps, caller, message.run_id, wait);
      if (taskStatusOf(run.view.status) === 'input_required' && run.approvals.length > 0) {
        const asks = run.approvals.map((a) => `step "${a.step_id}": ${a.message}`).join('; ');
        return jsonResult({
          ...base,
          status: 'input_required',
          waiting_for: run.approvals,
          statusMessage:
            `waiting for approval — ${asks}. Answer with the decide_approval tool (run_id "${run.view.run_id}", ` +
            `step_id, approved), then call get_thread_turn (thread_id "${threadId}", turn ${turn}) for the reply.`,
        });
      }
      // The run ended but the turn's end is not written yet: it is, by the same write, in a moment.
      if ((TERMINAL_RUN_STATUSES as readonly string[]).includes(run.view.status)) await pause(PAUSE_MS);
    } else await pause(PAUSE_MS);
    if (Date.now() >= deadline) {
      return jsonResult({
        ...base,
        status: 'working',
        statusMessage: `turn ${turn} is ${status}: call get_thread_turn (thread_id "${threadId}", turn ${turn}) for the reply.`,
      });
    }
  }
}
