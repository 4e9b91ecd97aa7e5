/**
 * Creating, deleting and forking threads, and cancelling a turn (docs/threads.md). Creating resolves the agent
 * template by id or name; deleting stops the running turn first (Temporal's cancellation, then termination when the
 * turn does not end in time) and removes everything of the thread; a fork copies the conversation up to a message,
 * with no model call.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { findVisibleTemplate, findVisibleTemplatesByName, type TemplateDoc } from '../../../db/templates';
import { isId, newId } from '../../../db/ids';
import { findRunRecord, isTerminal } from '../../../db/runs';
import {
  cancelQueuedTurn,
  findUserMessage,
  insertThreadMessages,
  messageDocIdIn,
  publicMessageId,
  readMessagesUpTo,
} from '../../../db/thread-messages';
import { initialMemory } from '../../../domain/thread-memory';
import { removeThreadData, threadRuns } from '../../../db/thread-removal';
import {
  dropQueuedTurn,
  findOwnThread,
  insertThread,
  markThreadDeleting,
  type RunningTurn,
  type ThreadDoc,
  type ThreadMetadata,
  type ThreadOverrides,
} from '../../../db/threads';
import { findOwnMcpServers } from '../../../db/mcp-servers';
import { parseThreadMessageId } from '../../../domain/thread';
import { cancelRun } from '../run-control';
import { ConflictError, NotFoundError, UnprocessableError } from '../../http/errors';
import type { ThreadCommandDeps } from './post-message';

/** How long a DELETE waits for a cancelled turn to end before it terminates the turn's workflow. */
const CANCEL_WAIT_MS = 10_000;
const POLL_MS = 100;

export interface CreateThreadRequest {
  ownerId: string;
  template: string;
  title: string | null;
  metadata: ThreadMetadata;
  overrides: ThreadOverrides;
}

export async function createThread(deps: ThreadCommandDeps, req: CreateThreadRequest): Promise<ThreadDoc> {
  const template = await resolveTemplate(deps, req.ownerId, req.template);
  const servers = (req.overrides.mcp_tools ?? []).flatMap((s) => (s.server_id !== undefined ? [s.server_id] : []));
  if (servers.length > 0) {
    const found = await findOwnMcpServers(deps.db, req.ownerId, servers);
    const missing = servers.find((id) => !found.some((s) => s._id === id));
    if (missing)
      throw new UnprocessableError(`overrides.mcp_tools: MCP server ${missing} not found`, 'unknown_mcp_server');
  }
  const now = new Date();
  const doc: ThreadDoc = {
    _id: newId('thr'),
    owner_id: req.ownerId,
    template_id: template._id,
    template_name: template.name,
    title: req.title,
    metadata: req.metadata,
    overrides: req.overrides,
    turns: 0,
    queued: 0,
    running: null,
    last_message_id: null,
    message_count: 0,
    usage: { llm_calls: 0, input_tokens: 0, output_tokens: 0 },
    version: 0,
    ...(template.memory_schema
      ? { memory_schema: template.memory_schema, memory: initialMemory(template.memory_schema), memory_version: 0 }
      : {}),
    created_at: now,
    updated_at: now,
  };
  await insertThread(deps.db, doc);
  return doc;
}

async function resolveTemplate(deps: ThreadCommandDeps, ownerId: string, ref: string): Promise<TemplateDoc> {
  const byId = isId('tpl', ref) ? await findVisibleTemplate(deps.db, ownerId, ref) : null;
  // A name: the caller's own template of that name before a system template of it.
  const byName = byId ? [] : await findVisibleTemplatesByName(deps.db, ownerId, [ref]);
  const template = byId ?? byName.find((t) => t.owner_id === ownerId) ?? byName[0];
  if (!template) throw new UnprocessableError(`template: no agent template ${JSON.stringify(ref)}`, 'unknown_template');
  if (template.step_type !== 'agent') {
    throw new UnprocessableError(
      `template: ${JSON.stringify(ref)} is an action template, not an agent`,
      'not_an_agent',
    );
  }
  return template;
}

/** Deletes the owner's thread: nothing new starts, the running turn ends, then everything of the thread goes. */
export async function deleteThread(deps: ThreadCommandDeps, ownerId: string, threadId: string): Promise<void> {
  const current = isId('thr', threadId) ? await findOwnThread(deps.db, ownerId, threadId) : null;
  if (current?.running?.step_id !== undefined) throw stepTurnRunning(current.running);
  const thread = current ? await markThreadDeleting(deps.db, ownerId, threadId) : null;
  if (!thread) throw new NotFoundError(`thread ${threadId} not found`);
  if (thread.running) await stopTurn(deps, thread, thread.running.run_id);
  await removeThreadData(deps.db, thread._id, await threadRuns(deps.db, thread._id));
}

/**
 * Cancels the turn's run and waits for the turn's end (the run ended and the worker wrote the turn's end into the
 * thread, so nothing of it is written after the removal); terminates the workflow when it does not end in time.
 */
async function stopTurn(deps: ThreadCommandDeps, thread: ThreadDoc, runId: string): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(runId);
  await handle.cancel().catch(() => undefined);
  const deadline = Date.now() + CANCEL_WAIT_MS;
  while (Date.now() < deadline) {
    const [run, now] = await Promise.all([
      findRunRecord(deps.db, thread.owner_id, runId),
      findOwnThread(deps.db, thread.owner_id, thread._id),
    ]);
    if (!run || (isTerminal(run.status) && now?.running?.run_id !== runId)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  await handle.terminate('its thread was deleted').catch((err: unknown) => {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  });
}

/**
 * A turn a workflow's agent step is taking (decision 0603) is not stopped from the thread: cancelling it would cancel
 * the whole workflow run. The caller cancels that run, or waits for the step to end.
 */
function stepTurnRunning(running: RunningTurn): ConflictError {
  return new ConflictError(
    `turn ${running.turn} is being answered by step ${running.step_id ?? ''} of run ${running.run_id}; ` +
      'cancel that run (POST /api/v1/workflows/runs/' +
      `${running.run_id}/cancel) or wait for the step to end`,
    'turn_running',
  );
}

/** Cancels a turn: a queued one never starts; a running one is cancelled as its run is. */
export async function cancelTurn(
  deps: ThreadCommandDeps,
  ownerId: string,
  threadId: string,
  turn: number,
): Promise<{ thread_id: string; turn: number; run_id: string | null }> {
  const thread = await ownThreadOr404(deps, ownerId, threadId);
  const message = await findUserMessage(deps.db, thread._id, turn);
  if (!message) throw new NotFoundError(`turn ${turn} of thread ${threadId} not found`);
  if (message.status === 'queued') {
    if (await cancelQueuedTurn(deps.db, thread._id, turn)) {
      await dropQueuedTurn(deps.db, thread._id);
      return { thread_id: thread._id, turn, run_id: null };
    }
  }
  if (!message.run_id || thread.running?.turn !== turn) {
    throw new ConflictError(`turn ${turn} has already ended (${message.status ?? 'unknown'})`);
  }
  if (thread.running.step_id !== undefined) throw stepTurnRunning(thread.running);
  await cancelRun(deps, ownerId, message.run_id);
  return { thread_id: thread._id, turn, run_id: message.run_id };
}

async function ownThreadOr404(deps: ThreadCommandDeps, ownerId: string, threadId: string): Promise<ThreadDoc> {
  const thread = isId('thr', threadId) ? await findOwnThread(deps.db, ownerId, threadId) : null;
  if (!thread) throw new NotFoundError(`thread ${threadId} not found`);
  return thread;
}

export { ownThreadOr404 };

/**
 * A new thread with the conversation of `threadId` up to the message `at` (copied, no model call): the same template,
 * overrides and metadata. Its copied turns have no runs; a turn that had not ended shows as cancelled.
 */
export async function forkThread(
  deps: ThreadCommandDeps,
  ownerId: string,
  threadId: string,
  at: string,
  title: string | null | undefined,
): Promise<ThreadDoc> {
  const source = await ownThreadOr404(deps, ownerId, threadId);
  const point = parseThreadMessageId(at);
  const copied = point ? await readMessagesUpTo(deps.db, source._id, point) : [];
  const last = copied[copied.length - 1];
  if (!point || !last || publicMessageId(last) !== at) {
    throw new UnprocessableError(`at: ${at} is not a message of thread ${threadId}`, 'unknown_message');
  }
  const now = new Date();
  const forkId = newId('thr');
  const messages = copied.map((m) => {
    const { run_id: _run, ...rest } = m;
    void _run;
    const unfinished = m.role === 'user' && (m.status === 'queued' || m.status === 'running' || m.status === 'waiting');
    return {
      ...rest,
      _id: messageDocIdIn(forkId, m),
      thread_id: forkId,
      ...(unfinished ? { status: 'cancelled' as const } : {}),
    };
  });
  const usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  const fork: ThreadDoc = {
    ...source,
    _id: forkId,
    title: title === undefined ? source.title : title,
    turns: point.turn,
    queued: 0,
    running: null,
    last_message_id: at,
    message_count: messages.length,
    usage,
    version: 0,
    // Where the fork's context reads start: the latest summary it copied (the source's may cover turns after the fork).
    summarized_to: copied.reduce((max, m) => Math.max(max, m.summary?.to_turn ?? 0), 0),
    // The memory as it is now, as the fork's first version (its history stays with the source).
    ...(source.memory_version !== undefined ? { memory_version: 0 } : {}),
    created_at: now,
    updated_at: now,
  };
  delete fork.deleting;
  // The messages first: a thread is never seen without the conversation it claims.
  await insertThreadMessages(deps.db, messages);
  await insertThread(deps.db, fork);
  return fork;
}
