/**
 * The status read (`GET /api/v1/workflows/runs/:runId/status`, MCP's `get_run`). It only reads: the workflow (through its activities) is the one writer of a run's state,
 * and the worker's reconciler (temporal/reconciler.ts) repairs what a lost write or an operator's terminate leaves
 * behind. The common case is one MongoDB read of the `runs` projection. Only when the projection is non-terminal and
 * has not changed for RUN_STATUS_CHECK_AFTER_SECONDS (or the run's deadline has passed) does it ask Temporal, with one
 * describe: a run Temporal has closed is answered with the status derived from the projection's steps and Temporal's
 * close status (never `running`), and a run whose next task no worker picks up, or whose workflow task keeps
 * failing (then a second request reads why from the history's newest events), is answered as not progressing.
 * Temporal being unreachable never fails the read.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../../config';
import { findRun, isTerminal } from '../../../db/runs';
import type { ApiMetrics } from '../../metrics';
import { deriveOutcome } from '../../../domain/run-state';
import {
  closedOutcome,
  describeRun,
  isOpen,
  lastWorkflowTaskFailure,
  livenessOf,
  lostOutputs,
  workflowTaskRetrying,
} from '../../../shared/runs/temporal-state';
import { NotFoundError } from '../../http/errors';
import { withOutcome, withOutputs } from './derived';
import { waitForChange, type CloseWatches, type WaitUntil } from './long-poll';
import type { PresentableRun } from '../../../shared/run-view/view';

export interface RunStatusDeps {
  config: Config;
  db: Db;
  temporal: Client;
  /** Lets a long poll learn of the run's end from Temporal at once (./long-poll.ts). */
  closeWatches?: CloseWatches;
  apiMetrics?: ApiMetrics;
}

/** How long a status read may wait for the run to change (or, with `until: 'end'`, to end); none when unset or 0. */
export interface StatusWait {
  waitSeconds?: number;
  until?: WaitUntil;
}

export async function getRunStatus(
  deps: RunStatusDeps,
  ownerId: string,
  runId: string,
  opts: StatusWait = {},
): Promise<PresentableRun> {
  const found = await findRun(deps.db, ownerId, runId);
  if (!found) throw new NotFoundError(`run ${runId} not found`);
  // Runs from before reads became read-only may carry a stored `liveness`: only this read's own check counts.
  let run: PresentableRun = { ...found, liveness: undefined };
  if (opts.waitSeconds && !isTerminal(run.status))
    run = await waitForChange(deps.db, run, opts.waitSeconds * 1000, deps.closeWatches, opts.until);
  const check = !isTerminal(run.status) && needsCheck(deps, run, Date.now());
  deps.apiMetrics?.statusRead(check);
  if (check) run = (await answerWithTemporal(deps, run)) ?? run;
  return withOutputs(run, await lostOutputs(deps.temporal, run));
}

function needsCheck(deps: RunStatusDeps, run: PresentableRun, now: number): boolean {
  if (run.deadline_at && now >= run.deadline_at.getTime()) return true;
  return now - run.updated_at.getTime() >= deps.config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000;
}

/** The view with what Temporal knows, or undefined when Temporal could not be asked (the projection as it is). */
async function answerWithTemporal(deps: RunStatusDeps, run: PresentableRun): Promise<PresentableRun | undefined> {
  const d = await describeRun(deps.temporal, run._id);
  if (d === undefined) return undefined;
  const now = new Date();
  if (d === 'not_found') {
    // Started once: Temporal's retention removed it; answer the projection as it is. Never started: the API process
    // stopped between recording the run and starting it, and nothing will start it (the reconciler records that).
    if (run.temporal.run_id !== null) return undefined;
    const steps = run.steps.map((s) => ({ id: s.id, status: s.status }));
    return withOutcome(run, deriveOutcome(steps, { kind: 'not_started' }), now);
  }
  if (isOpen(d)) {
    const thresholdMs = deps.config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000;
    // Only a task that keeps failing costs a second question: why it fails, from the newest events of the history.
    const failure = workflowTaskRetrying(d) ? await lastWorkflowTaskFailure(deps.temporal, run._id) : undefined;
    return { ...run, liveness: livenessOf(d, run, now, thresholdMs, failure) };
  }
  return withOutcome(run, await closedOutcome(deps.temporal, run, d), d.closeTime ?? now);
}
