/**
 * POST /api/v1/threads/:id/messages: accepts one user message as the thread's next turn, exactly once and in order
 * (docs/threads.md, decision 0600), and starts it as a run when no turn runs. In this order: the caller's run-start
 * quota, the thread's budget, the `Idempotency-Key` (claimed for the turn's run id, fixed here, so a retried POST
 * answers with the same message and turn), the one conditional write on the thread that accepts the message (or
 * refuses it: a running turn under `reject`, a stale `after`), the message, and the run's start. `?wait=N` then holds
 * the answer until the turn has ended (200 with the reply) or N seconds have passed (202).
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../../config';
import { claimKey, findClaim, releaseKey } from '../../../db/idempotency';
import { newId } from '../../../db/ids';
import { findRunRecord, isTerminal } from '../../../db/runs';
import {
  findReply,
  findTurnByRun,
  insertUserMessage,
  oldestQueued,
  publicMessageId,
  type ThreadMessageDoc,
} from '../../../db/thread-messages';
import { acceptTurn, clearLostQueue, findOwnThread, findThread, type ThreadDoc } from '../../../db/threads';
import { canonicalJson } from '../../../domain/json';
import { MAX_THREAD_MESSAGE_BYTES, threadMessageId, type MessagePolicy } from '../../../domain/thread';
import { RunRefusedError } from '../../../shared/runs/create-run';
import { startExecution } from '../../../shared/runs/start-execution';
import { failTurn, finishTurn, startNextTurn } from '../../../shared/threads/end-turn';
import { startTurnRun } from '../../../shared/threads/start-turn';
import { endLostStepTurn } from '../../../shared/threads/step-turn';
import { TurnUnbuildableError } from '../../../shared/threads/turn-snapshot';
import {
  ApiError,
  ConcurrentRunsExceededError,
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  UnprocessableError,
} from '../../http/errors';
import { isTemporalUnavailable } from '../../http/infra-errors';
import { presentThreadMessage, type AcceptedMessage } from '../../presenters/thread';
import type { CloseWatches } from '../run-status/long-poll';
import { waitForTurn } from './wait-turn';

/** A key's claim younger than this whose message is not written yet is a request still under way. */
const CLAIM_IN_FLIGHT_MS = 30_000;
/** A running turn whose run was never recorded this long after it was accepted: its start was interrupted. */
const LOST_START_MS = 30_000;
const CONCURRENT_RETRY_AFTER_SECONDS = 10;

export interface ThreadCommandDeps {
  config: Config;
  db: Db;
  temporal: Client;
  /** The run status wait's close watches (`?wait=`; without them the wait reads the run more often). */
  closeWatches?: CloseWatches | undefined;
}

export interface PostMessageRequest {
  ownerId: string;
  threadId: string;
  text: string;
  after: string | undefined;
  policy: MessagePolicy | undefined;
  idempotencyKey: string | undefined;
  waitSeconds: number;
  charge: () => Promise<void>;
}

export async function postMessage(deps: ThreadCommandDeps, req: PostMessageRequest): Promise<AcceptedMessage> {
  const thread = await ownThread(deps, req);
  const bytes = Buffer.byteLength(req.text, 'utf8');
  if (bytes > MAX_THREAD_MESSAGE_BYTES) {
    throw new ApiError(
      413,
      'message_too_large',
      `text: the message is ${bytes} bytes; a thread message takes at most ${MAX_THREAD_MESSAGE_BYTES}`,
    );
  }
  const key = req.idempotencyKey;
  const requestHash = hashOf(req);
  if (key !== undefined) {
    const repeat = await repeated(deps, req, thread, key, requestHash);
    if (repeat) return waitFor(deps, thread._id, repeat, req.waitSeconds);
  }
  await req.charge();
  assertThreadBudget(thread);
  const runId = newId('run');
  if (key !== undefined) {
    const claim = await claimKey(deps.db, { ownerId: req.ownerId, key, runId, requestHash });
    if (!claim.claimed) {
      const repeat = await repeated(deps, req, thread, key, requestHash);
      if (repeat) return waitFor(deps, thread._id, repeat, req.waitSeconds);
      throw inFlight();
    }
  }
  try {
    const message = await accept(deps, req, thread, runId);
    return await waitFor(deps, thread._id, message, req.waitSeconds);
  } catch (err) {
    // Refused before anything of the message was written: the key may be used again.
    if (key !== undefined && err instanceof RefusedBeforeWrite) await releaseKey(deps.db, req.ownerId, key, runId);
    throw err instanceof RefusedBeforeWrite ? err.cause : err;
  }
}

/** An answer given before the message was written: nothing of it exists. */
class RefusedBeforeWrite extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

async function ownThread(deps: ThreadCommandDeps, req: { ownerId: string; threadId: string }): Promise<ThreadDoc> {
  const thread = await findOwnThread(deps.db, req.ownerId, req.threadId);
  if (!thread) throw new NotFoundError(`thread ${req.threadId} not found`);
  if (thread.deleting) throw deletingError(thread._id);
  return thread;
}

const deletingError = (id: string) => new ConflictError(`thread ${id} is being deleted`, 'thread_deleting');
const inFlight = () =>
  new ConflictError('a request with this Idempotency-Key is still in flight; retry shortly', 'in_flight');

/** The same key again: the message it accepted (same request), refused (another request), or null (start afresh). */
async function repeated(
  deps: ThreadCommandDeps,
  req: PostMessageRequest,
  thread: ThreadDoc,
  key: string,
  requestHash: string,
): Promise<ThreadMessageDoc | null> {
  const claim = await findClaim(deps.db, req.ownerId, key);
  if (!claim) return null;
  if (claim.request_hash !== requestHash) {
    throw new UnprocessableError(
      'Idempotency-Key was already used with a different request body',
      'idempotency_mismatch',
    );
  }
  const message = await findTurnByRun(deps.db, thread._id, claim.run_id);
  if (message) return message;
  if (Date.now() - claim.created_at.getTime() < CLAIM_IN_FLIGHT_MS) throw inFlight();
  // The request that claimed it stopped before writing its message: the key is free again.
  await releaseKey(deps.db, req.ownerId, key, claim.run_id);
  return null;
}

function assertThreadBudget(thread: ThreadDoc): void {
  const max = thread.overrides.budget?.max_tokens;
  if (max === undefined) return;
  const used = thread.usage.input_tokens + thread.usage.output_tokens;
  if (used >= max) {
    throw new UnprocessableError(
      `thread budget exceeded: budget.max_tokens is ${max} and the thread's turns used ${used} tokens`,
      'thread_budget_exceeded',
    );
  }
}

/** The conditional write that takes the message, the message, and its run's start when it is next. */
async function accept(
  deps: ThreadCommandDeps,
  req: PostMessageRequest,
  thread: ThreadDoc,
  runId: string,
): Promise<ThreadMessageDoc> {
  const enqueue = (req.policy ?? thread.overrides.policy ?? 'reject') === 'enqueue';
  const args = {
    ownerId: req.ownerId,
    threadId: thread._id,
    after: req.after,
    enqueue,
    runId,
    messageId: (turn: number) => threadMessageId(turn, 0),
  };
  let accepted = await acceptTurn(deps.db, { ...args, read: thread });
  if (accepted.kind === 'busy' && (await repairThread(deps, thread._id))) accepted = await acceptTurn(deps.db, args);
  switch (accepted.kind) {
    case 'gone':
      throw new RefusedBeforeWrite(new NotFoundError(`thread ${thread._id} not found`));
    case 'deleting':
      throw new RefusedBeforeWrite(deletingError(thread._id));
    case 'stale':
      throw new RefusedBeforeWrite(
        new ConflictError(
          `after: the thread has moved on; its last message is ${accepted.last ?? 'none'}, not ${req.after}`,
          'stale_after',
        ),
      );
    case 'busy': {
      const running = accepted.running
        ? `turn ${accepted.running.turn} (run ${accepted.running.run_id}) is running`
        : `${accepted.queued} messages are waiting`;
      throw new RefusedBeforeWrite(
        new ConflictError(
          `${running}; send the message when it has ended, or with policy "enqueue" to run it after`,
          'turn_running',
        ),
      );
    }
    case 'started':
    case 'queued':
      break;
  }
  const queued = accepted.kind === 'queued';
  const message = await insertUserMessage(deps.db, {
    threadId: thread._id,
    ownerId: req.ownerId,
    turn: accepted.turn,
    text: req.text,
    runId,
    queued,
    at: new Date(),
  });
  if (!queued) await startTurn(deps, thread, message);
  return message;
}

/** The turn's run; a turn refused at its start fails (the next queued one starts) and the refusal is answered. */
async function startTurn(deps: ThreadCommandDeps, thread: ThreadDoc, message: ThreadMessageDoc): Promise<void> {
  try {
    await startTurnRun(deps, thread, message.turn, message.run_id ?? '', {
      start: async (doc, snapshot) => {
        try {
          await startExecution(deps, doc, snapshot);
        } catch (err) {
          if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
          throw err;
        }
      },
    });
  } catch (err) {
    const reason = err instanceof RunRefusedError ? err.reason : 'not_started';
    const text = err instanceof Error ? err.message : String(err);
    await failTurn(deps.db, thread._id, message.turn, { step_id: null, reason, message: text });
    await startNextTurn(deps, thread._id, message.turn);
    throw refusal(deps, err);
  }
}

function refusal(deps: ThreadCommandDeps, err: unknown): unknown {
  if (err instanceof TurnUnbuildableError) return new UnprocessableError(err.message, 'thread_invalid');
  if (!(err instanceof RunRefusedError)) return err;
  switch (err.reason) {
    case 'concurrent_runs_exceeded':
      return new ConcurrentRunsExceededError(deps.config.USER_MAX_CONCURRENT_RUNS, CONCURRENT_RETRY_AFTER_SECONDS);
    case 'in_flight':
      return new ConflictError(err.message);
    case 'too_large':
    case 'idempotency_mismatch':
      return new UnprocessableError(err.message, err.reason);
  }
}

/**
 * A thread whose running turn is over but was never ended (its run ended while no worker could write the turn's end,
 * or its start was interrupted): ended now, the way the worker ends it. True when something was repaired.
 */
async function repairThread(deps: ThreadCommandDeps, threadId: string): Promise<boolean> {
  const thread = await findThread(deps.db, threadId);
  if (!thread) return false;
  const running = thread.running;
  if (!running) {
    // Messages counted as queued whose documents never were written (a request stopped between its two writes).
    // Only long after the last change: a request between its two writes right now is not a lost one.
    if (thread.queued === 0) return false;
    // Which turn ran last is not known here (a queued one may have been cancelled): looked for from the first turn.
    if (await oldestQueued(deps.db, threadId, 0)) {
      // Queued messages and no turn running: the end of the last one could not start the next (Temporal down).
      await startNextTurn(deps, threadId, 0);
      return true;
    }
    // Only long after the last change: a request between its two writes right now is not a lost one.
    if (Date.now() - thread.updated_at.getTime() < LOST_START_MS) return false;
    return clearLostQueue(deps.db, thread);
  }
  // A workflow's agent step's turn (decision 0603) whose run ended without the step ending it (terminated).
  if (running.step_id !== undefined) return endLostStepTurn(deps, thread);
  const run = await findRunRecord(deps.db, thread.owner_id, running.run_id);
  if (run && isTerminal(run.status)) {
    await finishTurn(deps, running.run_id);
    return true;
  }
  if (!run && Date.now() - thread.updated_at.getTime() > LOST_START_MS) {
    const message = 'the turn never started (its start was interrupted)';
    await failTurn(deps.db, threadId, running.turn, { step_id: null, reason: 'not_started', message });
    await startNextTurn(deps, threadId, running.turn);
    return true;
  }
  return false;
}

/** Holds the answer until the turn has ended or `seconds` have passed (./wait-turn.ts); the reply when it completed. */
async function waitFor(
  deps: ThreadCommandDeps,
  threadId: string,
  message: ThreadMessageDoc,
  seconds: number,
): Promise<AcceptedMessage> {
  const current = seconds > 0 ? await waitForTurn(deps, message, seconds * 1000) : message;
  const reply = current.status === 'completed' ? await findReply(deps.db, threadId, current.turn) : null;
  return {
    thread_id: threadId,
    message_id: publicMessageId(current),
    turn: current.turn,
    run_id: current.run_id ?? '',
    status: current.status ?? 'queued',
    reply: reply ? presentThreadMessage(reply) : null,
  };
}

/** What a repeated request must equal: the thread, the text, `after` and the policy. */
function hashOf(req: PostMessageRequest): string {
  const body = {
    thread_id: req.threadId,
    text: req.text,
    ...(req.after !== undefined ? { after: req.after } : {}),
    ...(req.policy !== undefined ? { policy: req.policy } : {}),
  };
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}
