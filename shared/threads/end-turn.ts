/**
 * A thread turn's end, once its run has ended: the turn's answer is copied from the run's transcript into the
 * thread's messages (its approvals are there already, db/thread-approvals.ts), the turn's state goes on its user
 * message, and one conditional write on the thread clears the running turn and adds its usage; then the oldest queued
 * message (policy `enqueue`) is started. Every part is idempotent, so whoever gets there — the run's outcome write in
 * the worker (temporal/activities/projection.ts), a retry of it, or the API repairing a thread whose end was never
 * processed — leaves the same thread, and exactly one of them starts the next turn (the thread's compare-and-set).
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import {
  countTurnApprovals,
  findTurnByRun,
  oldestQueued,
  publicMessageId,
  putTurnMessages,
  setTurnState,
  threadMessageDocId,
  type ThreadMessageDoc,
} from '../../db/thread-messages';
import { claimQueuedTurn, endTurn, findThread } from '../../db/threads';
import { readTranscript, type TranscriptDoc } from '../../db/transcripts';
import { isTerminal, runsCollection } from '../../db/runs';
import type { RunError, RunStatus, Usage } from '../../domain/run';
import { THREAD_STEP_ID } from '../../domain/thread';
import { sumUsage } from '../../domain/usage';
import { startTurnRun, type TurnStartDeps } from './start-turn';

const ZERO: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };

/** Finishes the turn whose run is `runId` if it is a thread's and has ended (nothing otherwise); starts the next. */
export async function finishTurn(deps: Partial<TurnStartDeps> & { db: Db; log?: Logger }, runId: string) {
  const run = await runsCollection(deps.db).findOne(
    { _id: runId },
    { projection: { thread_id: 1, thread_turn: 1, owner_id: 1, status: 1, error: 1, 'steps.usage': 1 } },
  );
  if (!run?.thread_id || run.thread_turn === undefined || !isTerminal(run.status)) return;
  const usage = sumUsage(run.steps.map((s) => s.usage));
  await endAnswered(deps, {
    threadId: run.thread_id,
    ownerId: run.owner_id,
    turn: run.thread_turn,
    runId,
    stepId: THREAD_STEP_ID,
    state: { status: run.status, error: run.error, usage },
  });
}

/**
 * Ends a turn answered by the transcript of `stepId` in run `runId` (a turn run's `chat` step, or a workflow's agent
 * step that took the turn, decision 0603): the answer copied into the conversation, the turn's state on its user
 * message, the thread's running turn cleared with its usage added, and the next queued message started. Idempotent.
 */
export async function endAnswered(
  deps: Partial<TurnStartDeps> & { db: Db; log?: Logger },
  t: {
    threadId: string;
    ownerId: string;
    turn: number;
    runId: string;
    stepId: string;
    state: { status: RunStatus; error: RunError | null; usage: Usage };
  },
): Promise<void> {
  const entries = await readTranscript(deps.db, t.runId, t.stepId);
  const answer = entries.filter((e) => e.seq >= 2 && e.kind !== 'setup' && !(e.kind === 'user' && e.repair));
  const docs = answer.map((e) => messageOf(t.threadId, t.ownerId, t.turn, e));
  await putTurnMessages(deps.db, docs);
  await setTurnState(deps.db, t.threadId, t.turn, t.state);
  const last = docs[docs.length - 1];
  const lastId = last ? publicMessageId(last) : null;
  // The turn's approvals were written as they were asked (db/thread-approvals.ts); the count has them too.
  const approvals = await countTurnApprovals(deps.db, t.threadId, t.turn);
  await endTurn(deps.db, t.threadId, t.turn, t.state.usage, {
    lastMessageId: lastId,
    messages: docs.length + approvals,
  });
  await startNextTurn(deps, t.threadId, t.turn);
}

/** A turn that never got a run (refused at its start): failed, with the reason, and ended. */
export async function failTurn(db: Db, threadId: string, turn: number, error: RunError): Promise<void> {
  await setTurnState(db, threadId, turn, { status: 'failed', error, usage: ZERO });
  await endTurn(db, threadId, turn, ZERO, { lastMessageId: null, messages: 0 });
}

/**
 * Starts the oldest queued message's turn when no turn runs; a turn that cannot start fails and the next one is
 * tried. Queued turns are looked for after `afterTurn`, a turn that started (0: from the first). Without a Temporal
 * client (a worker composed without one) nothing is started.
 */
export async function startNextTurn(
  deps: Partial<TurnStartDeps> & { db: Db; log?: Logger },
  threadId: string,
  afterTurn: number,
) {
  const { temporal, config } = deps;
  if (!temporal || !config) return;
  for (let after = afterTurn; ;) {
    const next = await oldestQueued(deps.db, threadId, after);
    if (!next?.run_id) return;
    if (!(await claimQueuedTurn(deps.db, threadId, next.turn, next.run_id))) return;
    await setTurnState(deps.db, threadId, next.turn, { status: 'running' });
    const thread = await findThread(deps.db, threadId);
    if (!thread) return;
    try {
      await startTurnRun({ db: deps.db, config, temporal }, thread, next.turn, next.run_id);
      return;
    } catch (err) {
      deps.log?.warn({ err, thread_id: threadId, turn: next.turn }, 'a queued turn could not start');
      const message = err instanceof Error ? err.message : String(err);
      await failTurn(deps.db, threadId, next.turn, { step_id: null, reason: 'not_started', message });
      after = next.turn;
    }
  }
}

/** A transcript entry of a turn's answer as a thread message (pos = transcript seq, so a repeated copy is equal). */
function messageOf(threadId: string, ownerId: string, turn: number, e: TranscriptDoc): ThreadMessageDoc {
  const base = {
    _id: threadMessageDocId(threadId, turn, e.seq),
    thread_id: threadId,
    owner_id: ownerId,
    turn,
    pos: e.seq,
    created_at: e.written_at,
  };
  switch (e.kind) {
    case 'assistant':
      return {
        ...base,
        role: 'assistant',
        text: e.text,
        tool_calls: e.tool_calls,
        ...(e.final ? { final: true } : {}),
      };
    case 'tool':
      return {
        ...base,
        role: 'tool',
        text: null,
        tool: { call_id: e.call_id, name: e.name, args: e.args, output: e.output, is_error: e.is_error },
      };
    case 'user':
      return { ...base, role: 'user', text: e.text };
    case 'setup':
      return { ...base, role: 'user', text: null };
  }
}

/** The user message of the turn a run answers (for the API's repair of a thread whose turn end was missed). */
export const turnOfRun = (db: Db, threadId: string, runId: string) => findTurnByRun(db, threadId, runId);
