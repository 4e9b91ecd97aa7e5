/**
 * A workflow's agent step taking a turn in a thread (decision 0603, docs/threads.md): the step's rendered input is
 * the turn's user message, accepted by the same compare-and-set on the thread as a message sent through the API
 * (db/threads.ts `acceptTurn`), and the step's transcript is the turn's answer, copied into the conversation when
 * the step ends (./end-turn.ts `endAnswered`). The turn's run is the workflow's run and its `step_id` the step's
 * execution, so the turn is found again by (thread, run, step): a retried accept returns the turn it took, never a
 * second one. Used by the worker's activities (temporal/activities/agent/thread-step.ts) and by the API's repair of
 * a thread whose step turn was never ended (its run terminated).
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { findRunRecord, isTerminal } from '../../db/runs';
import { findVisibleTemplate } from '../../db/templates';
import { findStepTurn, insertUserMessage, type ThreadMessageDoc } from '../../db/thread-messages';
import { acceptTurn, findThread, type RunningTurn, type ThreadDoc } from '../../db/threads';
import type { RunStatus } from '../../domain/run';
import { DEFAULT_CONTEXT_TOKENS, MAX_THREAD_MESSAGE_BYTES, threadMessageId, type ThreadRef } from '../../domain/thread';
import { endAnswered, finishTurn } from './end-turn';
import type { TurnStartDeps } from './start-turn';

/** Why a step cannot take a turn in the thread: the step fails with the code and this message. */
export type StepTurnRefusal = {
  code: 'thread_not_found' | 'thread_deleting' | 'thread_budget_exceeded' | 'message_too_large';
  message: string;
};

/** What asking for a turn gave: the turn (new, or the one taken before), a turn that runs now, or a refusal. */
export type StepTurn =
  | { kind: 'joined'; thread: ThreadRef }
  | { kind: 'busy'; running: RunningTurn | null; queued: number }
  | ({ kind: 'refused' } & StepTurnRefusal);

export interface StepTurnRequest {
  ownerId: string;
  runId: string;
  stepId: string;
  threadId: string;
  /** The step's rendered input as the user message. */
  text: string;
}

/**
 * Takes the thread's next turn for the step when no turn runs and none waits (else `busy`: the caller waits and asks
 * again, so the turn comes after every message accepted before it). Only the run owner's thread: another user's is
 * the same `thread_not_found` as an unknown id, and nothing is written.
 */
export async function joinThreadAsStep(
  deps: Partial<TurnStartDeps> & { db: Db; log?: Logger },
  req: StepTurnRequest,
): Promise<StepTurn> {
  const { db } = deps;
  const thread = await findThread(db, req.threadId);
  if (!thread || thread.owner_id !== req.ownerId) {
    return { kind: 'refused', code: 'thread_not_found', message: `thread ${req.threadId} not found` };
  }
  // A retried accept: the turn this step took already.
  const taken = await findStepTurn(db, thread._id, req.runId, req.stepId);
  if (taken) return { kind: 'joined', thread: await refOf(db, thread, taken.turn) };
  // Taken, but the message was not written (the attempt stopped between the two writes): written now.
  if (thread.running?.run_id === req.runId && thread.running.step_id === req.stepId) {
    await insertMessage(db, req, thread.running.turn);
    return { kind: 'joined', thread: await refOf(db, thread, thread.running.turn) };
  }
  if (thread.deleting) {
    return { kind: 'refused', code: 'thread_deleting', message: `thread ${thread._id} is being deleted` };
  }
  const bytes = Buffer.byteLength(req.text, 'utf8');
  if (bytes > MAX_THREAD_MESSAGE_BYTES) {
    const message = `the step input is ${bytes} bytes as a thread message; a thread message takes at most ${MAX_THREAD_MESSAGE_BYTES}`;
    return { kind: 'refused', code: 'message_too_large', message };
  }
  if (req.text.trim() === '') {
    return { kind: 'refused', code: 'message_too_large', message: 'the step input is empty as a thread message' };
  }
  const max = thread.overrides.budget?.max_tokens;
  const used = thread.usage.input_tokens + thread.usage.output_tokens;
  if (max !== undefined && used >= max) {
    const message = `thread budget exceeded: budget.max_tokens is ${max} and the thread's turns used ${used} tokens`;
    return { kind: 'refused', code: 'thread_budget_exceeded', message };
  }
  const args = {
    ownerId: req.ownerId,
    threadId: thread._id,
    after: undefined,
    enqueue: false,
    runId: req.runId,
    stepId: req.stepId,
    messageId: (turn: number) => threadMessageId(turn, 0),
  };
  let accepted = await acceptTurn(db, args);
  // A running turn whose run ended without ending it (terminated): ended now, as the API's repair does.
  if (accepted.kind === 'busy' && (await endLostTurn(deps, thread._id))) accepted = await acceptTurn(db, args);
  switch (accepted.kind) {
    case 'gone':
      return { kind: 'refused', code: 'thread_not_found', message: `thread ${req.threadId} not found` };
    case 'deleting':
      return { kind: 'refused', code: 'thread_deleting', message: `thread ${thread._id} is being deleted` };
    case 'busy':
      return accepted;
    case 'stale': // no `after` was given
    case 'queued': // never asked to enqueue
      throw new Error(`unexpected acceptance ${accepted.kind}`);
    case 'started':
      await insertMessage(db, req, accepted.turn);
      return { kind: 'joined', thread: await refOf(db, thread, accepted.turn) };
  }
}

async function insertMessage(db: Db, req: StepTurnRequest, turn: number): Promise<ThreadMessageDoc> {
  const message = {
    threadId: req.threadId,
    ownerId: req.ownerId,
    turn,
    text: req.text,
    runId: req.runId,
    stepId: req.stepId,
    queued: false,
    at: new Date(),
  };
  return insertUserMessage(db, message).catch(async (err: unknown) => {
    // A concurrent retry of the same attempt wrote it first: the same message.
    const found = await findStepTurn(db, req.threadId, req.runId, req.stepId);
    if (found) return found;
    throw err;
  });
}

/** The turn as the agent step reads it: the thread's window is its template's `context_tokens`. */
async function refOf(db: Db, thread: ThreadDoc, turn: number): Promise<ThreadRef> {
  const template = await findVisibleTemplate(db, thread.owner_id, thread.template_id);
  return {
    id: thread._id,
    turn,
    context_tokens: template?.context_tokens ?? DEFAULT_CONTEXT_TOKENS,
    // As a turn run's (./turn-snapshot.ts): the context read starts after the turns the latest summary covers.
    ...(thread.summarized_to ? { after_turn: thread.summarized_to } : {}),
  };
}

/** Ends the thread's running turn when its run has ended (a turn run's, or a step's): true when it did. */
async function endLostTurn(deps: Partial<TurnStartDeps> & { db: Db; log?: Logger }, threadId: string) {
  const thread = await findThread(deps.db, threadId);
  const running = thread?.running;
  if (!thread || !running) return false;
  if (running.step_id !== undefined) return endLostStepTurn(deps, thread);
  const run = await findRunRecord(deps.db, thread.owner_id, running.run_id);
  if (!run || !isTerminal(run.status)) return false;
  await finishTurn(deps, running.run_id);
  return true;
}

/**
 * A thread whose running turn is a workflow step's whose run has ended without the step ending the turn (the run
 * was terminated): ended now with the run's record of the step. False when there was nothing to end (the run goes
 * on, or is unknown).
 */
export async function endLostStepTurn(
  deps: Partial<TurnStartDeps> & { db: Db; log?: Logger },
  thread: ThreadDoc,
): Promise<boolean> {
  const running = thread.running;
  if (!running?.step_id) return false;
  const run = await findRunRecord(deps.db, thread.owner_id, running.run_id);
  if (!run || !isTerminal(run.status)) return false;
  const step = run.steps.find((s) => s.id === running.step_id);
  const status: RunStatus =
    step?.status === 'completed' ? 'completed' : run.status === 'completed' ? 'failed' : run.status;
  await endAnswered(deps, {
    threadId: thread._id,
    ownerId: thread.owner_id,
    turn: running.turn,
    runId: running.run_id,
    stepId: running.step_id,
    state: {
      status,
      error: run.error ?? { step_id: running.step_id, reason: 'internal', message: 'the step did not end its turn' },
      usage: step?.usage ?? { llm_calls: 0, input_tokens: 0, output_tokens: 0 },
    },
  });
  return true;
}
