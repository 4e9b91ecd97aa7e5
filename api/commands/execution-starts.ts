/**
 * Starting a recorded run's Temporal execution (workflow id = run id), the last part of a run start.
 *
 * While Temporal answers, a start is acknowledged (202) as soon as its run is recorded and admitted, and the
 * execution is started just behind the answer: the run's record is the durable acknowledgement, as a row in an outbox
 * is, and `start_pending_at` marks it until Temporal has it. `sweepUnstarted` starts every acknowledged run whose start
 * was interrupted (the API stopped, Temporal went away), so each acknowledged run runs. While Temporal is not known
 * to answer (at boot, after a start failed), a start waits for Temporal before answering: an outage is a 503 with
 * nothing half-written, as the contract asks.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { holdsConcurrentSlot } from '../../runtime/runs/concurrent-limit';
import { loadedSnapshot, recordRunOutcome, runsCollection, type RunDoc } from '../../db/runs';
import type { RunSnapshot } from '../../temporal/contract/run';
import { deriveOutcome } from '../../temporal/contract/run-state';
import { START_DEADLINE_MS, startRunExecution } from '../../runtime/runs/start-execution';
import { ServiceUnavailableError } from '../errors';
import { isTemporalUnavailable } from '../infra-errors';
import type { WorkerStarts } from './worker-starts';

/** An acknowledged run still unstarted after this long was left behind by its start: the sweep starts it. */
export const SWEEP_AFTER_MS = 2 * START_DEADLINE_MS;
/** A start behind an answer still unanswered after this long means Temporal is slow or away: stop answering early. */
const SLOW_START_MS = 1_000;
/** How often each API process sweeps. */
export const SWEEP_EVERY_MS = 5_000;
/** Runs one sweep starts at most (the next sweep takes the rest). */
const SWEEP_BATCH = 100;

export interface ExecutionStartDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  /** Set when WORKER_START_URL is: starts are handed to that worker first. */
  workerStarts?: WorkerStarts;
}

/** Starts executions for one API process, remembering whether Temporal answered its last start. */
export class ExecutionStarts {
  /** Unknown at boot: the first starts wait for Temporal, and the first that succeeds turns the fast path on. */
  private answering = false;
  /** When each start behind an answer still under way began (by run id). */
  private readonly behind = new Map<string, number>();

  constructor(private readonly deps: ExecutionStartDeps) {}

  /**
   * Whether a start may be acknowledged before Temporal has it: Temporal answered the last start, and no start behind
   * an answer has been waiting for it longer than SLOW_START_MS (an outage shows there first).
   */
  get acknowledgeEarly(): boolean {
    if (!this.answering) return false;
    const slowSince = Date.now() - SLOW_START_MS;
    for (const since of this.behind.values()) if (since < slowSince) return false;
    return true;
  }

  /**
   * Starts the execution before answering; an unreachable Temporal is a 503 (and, with `removeOnFailure`, the record
   * of a run nobody was told about is removed again).
   */
  async startNow(doc: RunDoc, snapshot: RunSnapshot, opts: { removeOnFailure: boolean }): Promise<void> {
    try {
      await startExecution(this.deps, doc, snapshot);
      this.answering = true;
    } catch (err) {
      if (isTemporalUnavailable(err)) this.answering = false;
      if (opts.removeOnFailure) {
        await runsCollection(this.deps.db)
          .deleteOne({ _id: doc._id, 'temporal.run_id': null })
          .catch(() => undefined);
      }
      if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
      throw err;
    }
  }

  /**
   * Starts the execution of an acknowledged run behind the answer. Temporal unreachable: the run stays queued for the
   * sweep; Temporal refusing the start: the run fails, saying why.
   */
  startBehind(doc: RunDoc, snapshot: RunSnapshot): void {
    this.behind.set(doc._id, Date.now());
    // After the answer is written: encoding and sending the start (the snapshot through the codec, gRPC) would
    // otherwise run in the microtasks before Koa writes the 202, and the caller would wait for it after all.
    new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => startExecution(this.deps, doc, snapshot))
      .finally(() => this.behind.delete(doc._id))
      .then(
        () => {
          this.answering = true;
        },
        async (err: unknown) => {
          if (isTemporalUnavailable(err)) {
            this.answering = false;
            this.deps.logger.warn({ run_id: doc._id, err }, 'Temporal unreachable: the run starts when it answers');
            return;
          }
          await failUnstartable(this.deps, doc, err).catch((e: unknown) =>
            this.deps.logger.error({ run_id: doc._id, err: e }, 'could not record the refused start'),
          );
        },
      );
  }
}

/**
 * Starts the execution (idempotent by workflow id: a second start of the same run finds the first), through the worker
 * when one takes starts (./worker-starts.ts), and records Temporal's run id. A run cancelled while its start was under
 * way has its execution cancelled at once.
 */
export async function startExecution(deps: ExecutionStartDeps, doc: RunDoc, snapshot: RunSnapshot): Promise<void> {
  const temporalRunId =
    (await deps.workerStarts?.start(doc._id)) ?? (await startRunExecution(deps.temporal, doc, snapshot)).temporalRunId;
  // Not awaited: the run exists in Temporal now, and nothing depends on this record of its run id being written
  // before the answer (a retried request or the sweep finds the execution by its workflow id; read-repair asks
  // Temporal).
  void runsCollection(deps.db)
    .findOneAndUpdate(
      { _id: doc._id },
      { $set: { 'temporal.run_id': temporalRunId }, $unset: { start_pending_at: '' } },
      { projection: { status: 1 } },
    )
    .then(async (run) => {
      // Cancelled (POST …/cancel found no execution yet) while Temporal was starting it.
      if (run && run.status === 'cancelled') await deps.temporal.workflow.getHandle(doc._id).cancel();
    })
    .catch(() => undefined);
}

/** Temporal refused an acknowledged run's start for good (not an outage): the run fails with the reason. */
async function failUnstartable(deps: ExecutionStartDeps, doc: RunDoc, err: unknown): Promise<void> {
  const message = `Temporal refused to start the run: ${err instanceof Error ? err.message : String(err)}`;
  deps.logger.error({ run_id: doc._id, err }, 'Temporal refused the start of an acknowledged run');
  await runsCollection(deps.db).updateOne({ _id: doc._id }, { $unset: { start_pending_at: '' } });
  const steps = doc.steps.map((s) => ({ id: s.id, status: s.status }));
  await recordRunOutcome(deps.db, doc._id, deriveOutcome(steps, { kind: 'internal', message }));
}

/**
 * Starts acknowledged runs whose start was left behind (older than SWEEP_AFTER_MS). A run that is no longer queued
 * was started or ended meanwhile: only its mark is cleared. Each run is admitted again first (the limit of
 * concurrent runs), since its start may have stopped before the admission. Stops at the first unreachable Temporal.
 * Returns how many runs it started.
 */
export async function sweepUnstarted(
  deps: ExecutionStartDeps & { maxConcurrentRuns: number },
  now = new Date(),
): Promise<number> {
  const runs = runsCollection(deps.db);
  const left = await runs
    .find({ start_pending_at: { $lte: new Date(now.getTime() - SWEEP_AFTER_MS) } })
    .sort({ start_pending_at: 1 })
    .limit(SWEEP_BATCH)
    .toArray();
  let started = 0;
  for (const doc of left) {
    if (doc.status !== 'queued' || doc.temporal.run_id !== null) {
      await runs.updateOne({ _id: doc._id }, { $unset: { start_pending_at: '' } });
      continue;
    }
    if (!(await holdsConcurrentSlot(deps.db, doc, deps.maxConcurrentRuns))) continue; // a later sweep tries again
    try {
      await startExecution(deps, doc, loadedSnapshot(doc));
      started++;
    } catch (err) {
      if (isTemporalUnavailable(err)) break;
      await failUnstartable(deps, doc, err);
    }
  }
  return started;
}

/** Sweeps now and every `everyMs` until stopped (each API process sweeps; starts are idempotent by workflow id). */
export function startSweeping(
  deps: ExecutionStartDeps & { maxConcurrentRuns: number },
  everyMs = SWEEP_EVERY_MS,
): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const started = await sweepUnstarted(deps);
      if (started > 0) deps.logger.info({ started }, 'started runs whose start was left behind');
    } catch (err) {
      deps.logger.warn({ err }, 'could not sweep unstarted runs');
    }
    if (!stopped) timer = setTimeout(() => void tick(), everyMs).unref();
  };
  timer = setTimeout(() => void tick(), 0).unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
