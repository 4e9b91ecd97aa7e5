/**
 * The one repairer of run state, in the worker process. The run workflow is the one writer of a run's steps and
 * outcome; this catches the projection up where the workflow could not write: a projection write lost to a long
 * database outage, an operator's `terminate` (no workflow code runs), Temporal's backstop timeout, or a run recorded
 * but never started (the API process stopped between its insert and its Temporal start).
 *
 * A periodic loop in each worker, not a Temporal Schedule: every write here is conditional (a terminal write only on
 * a run not terminal yet, an output only where it is still empty) and the webhook start uses the delivery's
 * deterministic workflow id, so several workers reconciling the same run change it once and deliver once.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { findLostOutputRuns, findQuietOpenRuns, type ReconcileCandidate, type ScanPosition } from '../db/run-reconcile';
import { restoreLostOutputs } from '../db/step-states';
import { recordRunOutcome } from '../db/run-end';
import type { RunStatus } from '../domain/run';
import { deriveOutcome } from '../domain/run-state';
import { DELIVER_WEBHOOK_WORKFLOW_TYPE, webhookDeliveryId, type WebhookRequest } from '../domain/webhook';
import { closedOutcome, describeRun, endedWithoutWorkflow, isOpen, lostOutputs } from '../shared/runs/temporal-state';
import { finishTurn } from '../shared/threads/end-turn';
import type { Config } from '../config';

/** Runs looked at per pass and scan: bounds the pass's reads and Temporal calls. */
const BATCH = 100;
/**
 * A run without a Temporal execution this long after it was recorded was never started: the start path gives
 * Temporal 5 s (shared/runs/start-execution.ts), so a start still under way is never taken for a lost one.
 */
const NOT_STARTED_GRACE_MS = 60_000;
/** Completed runs are checked for lost outputs from this long before the reconciler starts. */
const LOST_OUTPUTS_LOOKBACK_MS = 24 * 3600_000;
const START_DEADLINE_MS = 5_000;

export interface ReconcilerDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  /** With it, a reconciled thread turn's end also starts the thread's next queued turn (shared/threads/end-turn.ts). */
  config?: Config;
  /** A run quiet this long is compared with Temporal (RUN_STATUS_CHECK_AFTER_SECONDS). */
  quietMs: number;
}

/** What one pass did, for the logs and the tests. */
export interface ReconcilePass {
  ended: string[];
  not_started: string[];
  webhooks: string[];
  outputs_restored: string[];
}

/** One reconciler: passes resume their scans where the last one stopped. */
export class Reconciler {
  private open: ScanPosition | null = null;
  private completed: ScanPosition;

  constructor(private readonly deps: ReconcilerDeps) {
    this.completed = { updated_at: new Date(Date.now() - LOST_OUTPUTS_LOOKBACK_MS), _id: '' };
  }

  /** One bounded pass over each scan; runs Temporal does not answer for are left for a later pass. */
  async pass(now = new Date()): Promise<ReconcilePass> {
    const done: ReconcilePass = { ended: [], not_started: [], webhooks: [], outputs_restored: [] };
    const quiet = await findQuietOpenRuns(this.deps.db, new Date(now.getTime() - this.deps.quietMs), this.open, BATCH);
    // A short page means the scan reached the end: the next pass starts over.
    this.open = quiet.length === BATCH ? { updated_at: quiet.at(-1)!.updated_at, _id: quiet.at(-1)!._id } : null;
    for (const run of quiet) await this.reconcileOpen(run, now, done);
    const lost = await findLostOutputRuns(this.deps.db, this.completed, BATCH);
    this.completed = lost.next;
    for (const run of lost.found) await this.restoreOutputs(run, done);
    return done;
  }

  private async reconcileOpen(run: ReconcileCandidate, now: Date, done: ReconcilePass): Promise<void> {
    const d = await describeRun(this.deps.temporal, run._id);
    if (d === undefined) return; // Temporal unreachable: a later pass
    if (d === 'not_found') {
      // Started once and gone: Temporal's retention removed it; nothing to learn from it.
      if (run.temporal.run_id !== null || now.getTime() - run.created_at.getTime() < NOT_STARTED_GRACE_MS) return;
      const steps = run.steps.map((s) => ({ id: s.id, status: s.status }));
      if (await recordRunOutcome(this.deps.db, run._id, deriveOutcome(steps, { kind: 'not_started' }), now)) {
        done.not_started.push(run._id);
        await finishTurn({ ...this.deps, log: this.deps.logger }, run._id).catch(() => undefined);
      }
      return;
    }
    if (isOpen(d)) return;
    const outcome = await closedOutcome(this.deps.temporal, run, d);
    // An end the workflow never saw also never started the run's completion webhook. It is started before the end is
    // written: a start that fails leaves the run open, so the next pass tries again (its id keeps it to one delivery).
    if (endedWithoutWorkflow(d)) {
      const webhook = await this.startWebhook(run, outcome.status);
      if (webhook === 'failed') return;
      if (webhook === 'started') done.webhooks.push(run._id);
    }
    if (!(await recordRunOutcome(this.deps.db, run._id, outcome, d.closeTime ?? now))) return;
    done.ended.push(run._id);
    this.deps.logger.info({ run_id: run._id, status: outcome.status }, 'reconciled a run Temporal has closed');
    // A thread's turn that ended without its workflow (terminated, timed out by Temporal) ends in its thread too.
    await finishTurn({ ...this.deps, log: this.deps.logger }, run._id).catch((err: unknown) =>
      this.deps.logger.warn({ run_id: run._id, err }, 'could not end the thread turn of a reconciled run'),
    );
    if (outcome.status === 'completed') await this.restoreOutputs({ ...run, status: 'completed' }, done);
  }

  private async restoreOutputs(run: ReconcileCandidate, done: ReconcilePass): Promise<void> {
    const outputs = await lostOutputs(this.deps.temporal, run);
    if (Object.keys(outputs).length === 0) return;
    await restoreLostOutputs(this.deps.db, run._id, outputs);
    done.outputs_restored.push(run._id);
  }

  /** The delivery the run workflow would have started, under its id: started at most once, whoever starts it. */
  private async startWebhook(run: ReconcileCandidate, status: RunStatus): Promise<'started' | 'none' | 'failed'> {
    const url = run.snapshot.callback_url;
    if (!url || run.snapshot.parent) return 'none';
    const request: WebhookRequest = { run_id: run._id, owner_id: run.owner_id, url, status };
    try {
      await this.deps.temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        this.deps.temporal.workflow.start(DELIVER_WEBHOOK_WORKFLOW_TYPE, {
          workflowId: webhookDeliveryId(run._id),
          taskQueue: run.temporal.task_queue,
          args: [request],
          staticSummary: `webhook of ${run._id} (${status})`,
        }),
      );
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'none';
      this.deps.logger.warn({ run_id: run._id, err }, 'could not start the completion webhook of a reconciled run');
      return 'failed';
    }
  }
}

/** Runs a pass every `intervalMs` until the returned stop is called (which waits for a pass under way). */
export function startReconciler(deps: ReconcilerDeps, intervalMs: number): () => Promise<void> {
  const reconciler = new Reconciler(deps);
  let current: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    current = current.then(() =>
      reconciler.pass().catch((err: unknown) => deps.logger.warn({ err }, 'reconciler pass failed')),
    );
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
