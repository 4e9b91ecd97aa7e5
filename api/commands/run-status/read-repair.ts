/**
 * Read-repair: reconciles a quiet, non-terminal projection with Temporal. A closed execution is written terminal with
 * the outcome deriveOutcome builds from the projection's steps (the same function the workflow uses); an open one
 * whose work no worker has picked up is marked stalled; a completed run that lost a step's completion write gets the
 * output back from Temporal's result.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { Config } from '../../../config';
import {
  findRun,
  recordRunOutcome,
  restoreLostOutputs,
  setRunLiveness,
  type RunLiveness,
  type RunOutcome,
} from '../../../db/runs';
import type { RunError, RunResult } from '../../../temporal/contract/run';
import { deriveOutcome } from '../../../temporal/contract/run-state';
import { RUN_FAILED_FAILURE_TYPE } from '../../../temporal/contract/steps';
import { startLateWebhook } from './late-webhook';
import type { RunStatusDeps, RunView } from './read';

/** Temporal gets this long to answer a describe before the projection is answered as it is. */
const DESCRIBE_DEADLINE_MS = 2_000;
/** proto enum values (PENDING_ACTIVITY_STATE_SCHEDULED, PENDING_WORKFLOW_TASK_STATE_SCHEDULED). */
const SCHEDULED = 1;

/**
 * A completed run with a completed step that has no output lost that step's completion write (the database was down
 * longer than the workflow retries its projection writes). Temporal's result holds the outputs (unless they were
 * too large for it): they are written back, so this costs one Temporal call once. Otherwise the view is unchanged.
 */
export async function repairLostOutputs(deps: RunStatusDeps, run: RunView): Promise<RunView> {
  const lost = run.steps.filter((s) => s.status === 'completed' && s.output_json === null).map((s) => s.id);
  if (run.status !== 'completed' || lost.length === 0) return run;
  const result = await resultOf(deps, run);
  if (!result) return run; // Temporal unreachable, or the run's history is gone: answer the projection as it is
  const found = Object.fromEntries(Object.entries(result?.outputs ?? {}).filter(([id]) => lost.includes(id)));
  if (Object.keys(found).length === 0) return run;
  await restoreLostOutputs(deps.db, run._id, found);
  return (await findRun(deps.db, run.owner_id, run._id)) ?? run;
}

export function needsCheck(config: Config, run: RunView, now: number): boolean {
  const quietMs = now - Math.max(run.updated_at.getTime(), run.liveness?.checked_at.getTime() ?? 0);
  if (run.deadline_at && now >= run.deadline_at.getTime()) return true;
  return quietMs >= config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000;
}

/** Returns the repaired/annotated view, or undefined when Temporal could not be asked. */
export async function checkWithTemporal(deps: RunStatusDeps, run: RunView): Promise<RunView | undefined> {
  const handle = deps.temporal.workflow.getHandle(run._id);
  let description: WorkflowExecutionDescription;
  try {
    description = await deps.temporal.connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () =>
      handle.describe(),
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return repairNeverStarted(deps, run);
    return undefined; // Temporal unreachable: answer the projection as it is
  }
  const now = new Date();
  if (description.status.name === 'RUNNING' || description.status.name === 'PAUSED') {
    const liveness = livenessOf(description, run, now, deps.config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000);
    await setRunLiveness(deps.db, run._id, liveness);
    return { ...run, liveness };
  }
  const outcome = await outcomeOf(deps, run, description);
  const at = description.closeTime ?? now;
  const recorded = await recordRunOutcome(deps.db, run._id, outcome, at);
  // An end the workflow never saw (timed out, terminated) also never started the run's webhook.
  if (recorded && (outcome.status === 'timed_out' || outcome.error?.reason === 'terminated')) {
    await startLateWebhook(deps, run, outcome.status).catch(() => undefined);
  }
  return (await findRun(deps.db, run.owner_id, run._id)) ?? run;
}

/** Work Temporal has scheduled for the run that no worker started within the threshold. */
function livenessOf(d: WorkflowExecutionDescription, run: RunView, now: Date, thresholdMs: number): RunLiveness {
  const waitingSince: number[] = [];
  const task = d.raw.pendingWorkflowTask;
  if (task && Number(task.state) === SCHEDULED) {
    const t = optionalTsToMs(task.originalScheduledTime ?? task.scheduledTime);
    if (t !== undefined) waitingSince.push(t);
  }
  for (const a of d.raw.pendingActivities ?? []) {
    if (Number(a.state) !== SCHEDULED) continue;
    // A retry waiting out its backoff is due at nextAttemptScheduleTime; only the time after that counts.
    const t = optionalTsToMs(a.nextAttemptScheduleTime ?? a.lastAttemptCompleteTime ?? a.scheduledTime);
    if (t !== undefined) waitingSince.push(t);
  }
  const oldest = waitingSince.length > 0 ? Math.min(...waitingSince) : undefined;
  if (oldest !== undefined && now.getTime() - oldest >= thresholdMs) {
    const seconds = Math.round((now.getTime() - oldest) / 1000);
    return {
      checked_at: now,
      stalled: true,
      message: `not progressing: no worker has picked up the run's next task for ${seconds} s (task queue ${run.temporal.task_queue})`,
    };
  }
  return { checked_at: now, stalled: false, message: null };
}

/**
 * The outcome of a run Temporal has closed, from the projection's step states: deriveOutcome decides what happens
 * to the steps still open, exactly as the workflow itself would have (temporal/contract/run-state.ts).
 */
async function outcomeOf(deps: RunStatusDeps, run: RunView, d: WorkflowExecutionDescription): Promise<RunOutcome> {
  const steps = run.steps.map((s) => ({ id: s.id, status: s.status }));
  switch (d.status.name) {
    case 'COMPLETED': {
      // Graph runs report how each step ended (some were skipped); older runs completed every step.
      const ended = await resultOf(deps, run).then((r) => r?.steps);
      return deriveOutcome(ended ? steps.map((s) => ({ id: s.id, status: ended[s.id] ?? s.status })) : steps, {
        kind: 'completed',
      });
    }
    case 'CANCELLED':
      return deriveOutcome(steps, { kind: 'cancelled' });
    case 'TIMED_OUT':
      return deriveOutcome(steps, { kind: 'timed_out' });
    case 'TERMINATED':
      return deriveOutcome(steps, { kind: 'terminated' });
    case 'FAILED': {
      const error = await failureOf(deps, run);
      if (error) return deriveOutcome(steps, { kind: 'failed', error });
      return deriveOutcome(steps, { kind: 'internal', message: 'the run failed' });
    }
    case 'RUNNING':
    case 'PAUSED':
    case 'CONTINUED_AS_NEW':
    case 'UNKNOWN':
    case 'UNSPECIFIED':
      // Not closed states of the run workflow (RUNNING/PAUSED are handled by the caller); report rather than guess.
      return deriveOutcome(steps, { kind: 'internal', message: `Temporal reports the run as ${d.status.name}` });
  }
}

/** The run's result, when Temporal answers in time (undefined otherwise). */
async function resultOf(deps: RunStatusDeps, run: RunView): Promise<RunResult | undefined> {
  try {
    return await deps.temporal.connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, (): Promise<RunResult> =>
      deps.temporal.workflow.getHandle(run._id).result(),
    );
  } catch {
    return undefined;
  }
}

/** The RunError the workflow failed with (its first failure detail). */
async function failureOf(deps: RunStatusDeps, run: RunView): Promise<RunError | undefined> {
  try {
    await deps.temporal.connection.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () =>
      deps.temporal.workflow.getHandle(run._id).result(),
    );
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) {
      const detail = err.cause.details?.[0] as RunError | undefined;
      if (err.cause.type === RUN_FAILED_FAILURE_TYPE && detail && typeof detail.reason === 'string') return detail;
      return { step_id: null, reason: 'internal', message: err.cause.message };
    }
  }
  return undefined;
}

/**
 * Temporal has no such execution: the API process stopped between recording the run and starting it, so the run was
 * never acknowledged (a start is answered once Temporal has it) and nothing will start it.
 */
async function repairNeverStarted(deps: RunStatusDeps, run: RunView): Promise<RunView | undefined> {
  if (run.temporal.run_id !== null) return undefined; // started once: Temporal's retention removed it; keep as is
  await recordRunOutcome(
    deps.db,
    run._id,
    deriveOutcome(
      run.steps.map((s) => ({ id: s.id, status: s.status })),
      { kind: 'not_started' },
    ),
  );
  return (await findRun(deps.db, run.owner_id, run._id)) ?? run;
}
