/**
 * Scheduled runs (Temporal Schedules). A schedule's action starts `scheduledRunWorkflow`, which builds the run's
 * snapshot when the run starts (so an edited workflow is picked up by the next run) and then runs it as an ordinary
 * run in the same execution. Temporal names each started execution `<action workflow id>-<RFC 3339 time>`: that is
 * the run id (db/ids.ts accepts the shape).
 */
import type { JsonObject } from './json';
import type { RunSnapshot } from './run';

export const SCHEDULED_RUN_WORKFLOW_TYPE = 'scheduledRunWorkflow';

/** The schedule action's one argument: fixed when the schedule is written. */
export interface ScheduledRunArgs {
  schedule_id: string;
  owner_id: string;
  workflow_id: string;
  input: JsonObject;
}

/** What the worker's first activity is told: the args plus the execution it runs in. */
export interface ScheduledRunRequest extends ScheduledRunArgs {
  /** The Temporal workflow id (= the run id). */
  run_id: string;
  temporal_run_id: string;
  /** When the execution's timeout ends the run (ISO), or null. */
  deadline_at: string | null;
}

/**
 * The run's snapshot, or why the run could not start — already recorded as a failed run with this reason
 * (`workflow_invalid`, `invalid_input`, `too_large`, `concurrent_runs_exceeded`).
 */
export type ScheduledRunVerdict =
  { ok: true; snapshot: RunSnapshot } | { ok: false; reason: ScheduledRunRefusal; message: string };

export type ScheduledRunRefusal = 'workflow_invalid' | 'invalid_input' | 'too_large' | 'concurrent_runs_exceeded';

/** The ApplicationFailure type a scheduled run that could not start fails with (its message says why). */
export const SCHEDULED_RUN_REFUSED_FAILURE_TYPE = 'scheduled_run_refused';

/** The action's workflow id for a schedule `sch_<x>`: `run_<x>`, to which Temporal appends the fire time. */
export function scheduledRunIdBase(scheduleId: string): string {
  return `run_${scheduleId.replace(/^sch_/, '')}`;
}
