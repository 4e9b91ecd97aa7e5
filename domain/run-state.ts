/**
 * The one derivation of run-level state from step states, used by the run workflow (its progress query and its
 * outcome), the API's status view and read, and the worker's reconciler. Nothing else decides a run's status or which steps an ending
 * closes: concurrent step writes never race over a run-level field, because the displayed status is computed from
 * the steps every time and the stored one changes only once, to terminal. Pure and workflow-safe.
 */
import type { RunError, RunStatus, StepStatus } from './run';
import { TERMINAL_RUN_STATUSES } from './run';
import type { RunOutcome, StepError } from './steps';

export interface StepState {
  id: string;
  status: StepStatus;
}

/**
 * The status a run shows: its stored terminal status once it has one; otherwise `running` while any step runs,
 * `waiting` when the only open work waits for a human, `queued` until a step has started.
 */
export function deriveRunStatus(stored: RunStatus, steps: readonly StepState[]): RunStatus {
  if (TERMINAL_RUN_STATUSES.includes(stored)) return stored;
  if (steps.some((s) => s.status === 'running')) return 'running';
  if (steps.some((s) => s.status === 'waiting')) return 'waiting';
  if (steps.every((s) => s.status === 'pending')) return stored === 'queued' ? 'queued' : 'running';
  return 'running';
}

/** How a run ended, as far as the caller knows. */
export type RunEnd =
  | { kind: 'completed' }
  /** A step failed the run (error.step_id names it). */
  | { kind: 'failed'; error: RunError }
  /** `stepId: null`: cancelled before any step started (the API's cancel of a run never started). */
  | { kind: 'cancelled'; message?: string; stepId?: null }
  | { kind: 'timed_out' }
  | { kind: 'terminated' }
  | { kind: 'not_started' }
  | { kind: 'internal'; message: string };

const OPEN: readonly StepStatus[] = ['pending', 'running', 'waiting'];

/** Why an ending stops the steps it finds open, as a StepError reason and message. */
function stopReason(end: Exclude<RunEnd, { kind: 'completed' }>): StepError {
  switch (end.kind) {
    case 'failed':
      return {
        reason: 'cancelled',
        message: end.error.step_id ? `stopped: step "${end.error.step_id}" failed the run` : 'stopped: the run failed',
      };
    case 'cancelled':
      return { reason: 'cancelled', message: 'cancelled' };
    case 'timed_out':
      return { reason: 'timeout', message: 'the run exceeded its time limit (config.timeout_seconds)' };
    case 'terminated':
      return { reason: 'terminated', message: 'the run was terminated in Temporal' };
    case 'not_started':
      return { reason: 'not_started', message: 'the run never started' };
    case 'internal':
      return { reason: 'internal', message: end.message };
  }
}

function runError(end: Exclude<RunEnd, { kind: 'completed' }>, current: string | null): RunError {
  switch (end.kind) {
    case 'failed':
      return end.error;
    case 'cancelled':
      return {
        step_id: end.stepId === null ? null : current,
        reason: 'cancelled',
        message: end.message ?? 'the run was cancelled',
      };
    case 'timed_out':
      return {
        step_id: current,
        reason: 'timeout',
        message: 'the run exceeded its time limit (config.timeout_seconds)',
      };
    case 'terminated':
      return { step_id: current, reason: 'terminated', message: 'the run was terminated in Temporal' };
    case 'not_started':
      return {
        step_id: null,
        reason: 'not_started',
        message:
          'the run was recorded but never started (the API stopped before starting it); start the workflow again',
      };
    case 'internal':
      return { step_id: current, reason: 'internal', message: end.message };
  }
}

/**
 * The outcome to record when a run ends: its terminal status and error, and what happens to each step still open —
 * the failing step gets the run's error, other started steps are stopped (failed, reason `cancelled` / `timeout` /
 * …), steps never reached are `skipped`. A completed run closes open steps as completed (only a projection that
 * fell behind still has open steps then; the workflow passes the steps' real states).
 */
export function deriveOutcome(steps: readonly StepState[], end: RunEnd): RunOutcome {
  const open = steps.filter((s) => OPEN.includes(s.status));
  if (end.kind === 'completed') {
    return { status: 'completed', error: null, stepUpdates: steps.map((s) => ({ id: s.id, status: finalOf(s) })) };
  }
  const started = open.find((s) => s.status !== 'pending');
  const error = runError(end, end.kind === 'failed' ? end.error.step_id : ((started ?? open[0])?.id ?? null));
  const stop = stopReason(end);
  const skippedWhy = end.kind === 'failed' ? 'the run failed before this step ran' : `the run ended (${end.kind})`;
  const stepUpdates: NonNullable<RunOutcome['stepUpdates']> = [];
  for (const s of steps) {
    if (end.kind === 'failed' && s.id === error.step_id) {
      const code = error.code ? { code: error.code } : {};
      stepUpdates.push({
        id: s.id,
        status: 'failed',
        error: { reason: error.reason, message: error.message, ...code },
      });
    } else if (s.status === 'running' || s.status === 'waiting') {
      // The step the run stopped at carries the run's own reason (as before graphs: one current step).
      const own = end.kind !== 'failed' && s.id === error.step_id;
      stepUpdates.push({
        id: s.id,
        status: 'failed',
        error: own ? { reason: error.reason, message: stop.message } : stop,
      });
    } else if (s.status === 'pending') {
      stepUpdates.push({ id: s.id, status: 'skipped', skip_reason: skippedWhy });
    }
  }
  const status = end.kind === 'cancelled' ? 'cancelled' : end.kind === 'timed_out' ? 'timed_out' : 'failed';
  return { status, error, stepUpdates };
}

function finalOf(s: StepState): StepStatus {
  return OPEN.includes(s.status) ? 'completed' : s.status;
}
