/**
 * What Temporal knows of a run that its projection may not: whether the execution is open and progressing, how a
 * closed one ended, and the outputs of a completed one. Pure reads of Temporal, shared by the status read (which
 * answers them, api/commands/run-status) and the worker's reconciler (which writes them, ../../temporal/reconciler.ts).
 */
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { RunDoc, RunLiveness, RunOutcome } from '../../db/runs';
import type { JsonValue } from '../../domain/json';
import type { OutputRef, RunError, RunResult } from '../../domain/run';
import { deriveOutcome } from '../../domain/run-state';
import { RUN_FAILED_FAILURE_TYPE } from '../../domain/steps';

/** Temporal gets this long to answer before the caller goes on without it. */
const TEMPORAL_DEADLINE_MS = 2_000;
/** proto enum values (PENDING_ACTIVITY_STATE_SCHEDULED, PENDING_WORKFLOW_TASK_STATE_SCHEDULED). */
const SCHEDULED = 1;

type RunRef = Pick<RunDoc, '_id' | 'steps' | 'temporal'>;

/** The execution, `not_found` when Temporal has none under the run's id, undefined when Temporal did not answer. */
export async function describeRun(
  temporal: Client,
  runId: string,
): Promise<WorkflowExecutionDescription | 'not_found' | undefined> {
  try {
    return await temporal.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
      temporal.workflow.getHandle(runId).describe(),
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'not_found';
    return undefined;
  }
}

/** RUNNING and PAUSED executions are open; every other status is an end. */
export function isOpen(d: WorkflowExecutionDescription): boolean {
  return d.status.name === 'RUNNING' || d.status.name === 'PAUSED';
}

/** Proto enum values of the history events that end a workflow task without completing it. */
const WORKFLOW_TASK_TIMED_OUT = 8;
const WORKFLOW_TASK_FAILED = 9;
/** The newest events a failing task's last failure is searched among (it is among the last few). */
const FAILURE_SEARCH_EVENTS = 20;
/** A failure message is cut here: it comes from worker code and only has to say what went wrong. */
const FAILURE_MESSAGE_MAX = 500;

/**
 * Whether the run's pending workflow task has failed before (attempt > 1): Temporal retries a failing workflow task
 * without end and records only the first failure, so the run looks open and quiet while its code cannot go on.
 */
export function workflowTaskRetrying(d: WorkflowExecutionDescription): boolean {
  return (d.raw.pendingWorkflowTask?.attempt ?? 0) > 1;
}

/**
 * Why the run's workflow task last failed or timed out, from the newest events of its history (one reverse page),
 * or undefined when Temporal does not answer or records none.
 */
export async function lastWorkflowTaskFailure(temporal: Client, runId: string): Promise<string | undefined> {
  try {
    const page = await temporal.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
      temporal.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: temporal.options.namespace,
        execution: { workflowId: runId },
        maximumPageSize: FAILURE_SEARCH_EVENTS,
      }),
    );
    for (const e of page.history?.events ?? []) {
      const type = Number(e.eventType);
      if (type === WORKFLOW_TASK_TIMED_OUT) return 'the workflow task timed out';
      if (type === WORKFLOW_TASK_FAILED) {
        // The failure's message travels encoded (the payload codec): decoded as the SDK decodes any failure.
        const failure = e.workflowTaskFailedEventAttributes?.failure;
        const error = await decodeOptionalFailureToOptionalError(temporal.options.loadedDataConverter, failure);
        const message = error?.message ?? 'no message';
        return message.length > FAILURE_MESSAGE_MAX ? `${message.slice(0, FAILURE_MESSAGE_MAX)}…` : message;
      }
    }
  } catch {
    // Temporal did not answer: the liveness says the task keeps failing, without why.
  }
  return undefined;
}

/**
 * Whether the run progresses: not when work Temporal has scheduled for it has not been started by a worker within
 * `thresholdMs` (every worker down, or none polling the run's task queue), nor when its workflow task keeps failing
 * (attempt > 1; `taskFailure` is why it last failed, see lastWorkflowTaskFailure).
 */
export function livenessOf(
  d: WorkflowExecutionDescription,
  run: RunRef,
  now: Date,
  thresholdMs: number,
  taskFailure?: string,
): RunLiveness {
  const attempt = d.raw.pendingWorkflowTask?.attempt ?? 0;
  if (workflowTaskRetrying(d)) {
    const why = taskFailure ? `; last failure: ${taskFailure}` : '';
    return {
      checked_at: now,
      stalled: true,
      message: `not progressing: the run's workflow task fails and Temporal keeps retrying it (attempt ${attempt})${why}`,
    };
  }
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
 * to the steps still open, exactly as the workflow itself would have (domain/run-state.ts).
 */
export async function closedOutcome(
  temporal: Client,
  run: RunRef,
  d: WorkflowExecutionDescription,
): Promise<RunOutcome> {
  const steps = run.steps.map((s) => ({ id: s.id, status: s.status }));
  switch (d.status.name) {
    case 'COMPLETED': {
      // Graph runs report how each step ended (some were skipped); older runs completed every step.
      const ended = await resultOf(temporal, run._id).then((r) => r?.steps);
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
      const error = await failureOf(temporal, run._id);
      // The run's own deadline (temporal/workflows/deadline.ts) fails the execution with a `timeout` error.
      if (error?.reason === 'timeout') return deriveOutcome(steps, { kind: 'timed_out' });
      if (error) return deriveOutcome(steps, { kind: 'failed', error });
      return deriveOutcome(steps, { kind: 'internal', message: 'the run failed' });
    }
    case 'RUNNING':
    case 'PAUSED':
    case 'CONTINUED_AS_NEW':
    case 'UNKNOWN':
    case 'UNSPECIFIED':
      // Not closed states of the run workflow; report rather than guess.
      return deriveOutcome(steps, { kind: 'internal', message: `Temporal reports the run as ${d.status.name}` });
  }
}

/** An end the workflow never saw, so it started no completion webhook: Temporal's timeout or a terminate. */
export function endedWithoutWorkflow(d: WorkflowExecutionDescription): boolean {
  return d.status.name === 'TIMED_OUT' || d.status.name === 'TERMINATED';
}

/**
 * Outputs of completed steps whose completion write was lost (the database was down longer than the workflow
 * retries its projection writes), from Temporal's result (unless they were too large for it). Empty when nothing is
 * lost or Temporal does not answer.
 */
export async function lostOutputs(
  temporal: Client,
  run: Pick<RunDoc, '_id' | 'status' | 'steps'>,
): Promise<Record<string, JsonValue | OutputRef>> {
  const lost = run.steps.filter((s) => s.status === 'completed' && s.output_json === null).map((s) => s.id);
  if (run.status !== 'completed' || lost.length === 0) return {};
  const result = await resultOf(temporal, run._id);
  return Object.fromEntries(Object.entries(result?.outputs ?? {}).filter(([id]) => lost.includes(id)));
}

/** The run's result, when Temporal answers in time (undefined otherwise). */
async function resultOf(temporal: Client, runId: string): Promise<RunResult | undefined> {
  try {
    return await temporal.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, (): Promise<RunResult> =>
      temporal.workflow.getHandle(runId).result(),
    );
  } catch {
    return undefined;
  }
}

/** The RunError the workflow failed with (its first failure detail). */
async function failureOf(temporal: Client, runId: string): Promise<RunError | undefined> {
  try {
    await temporal.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () =>
      temporal.workflow.getHandle(runId).result(),
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
