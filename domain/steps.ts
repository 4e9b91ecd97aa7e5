/**
 * What the run workflow and its activities exchange: the action-step request, projection events and the run's
 * outcome. Workflow-safe: types only.
 */
import type { ActivityActionType } from './actions/catalog';
import type { JsonObject, JsonValue } from './json';
import type { OutputRef, RunError, RunSnapshot, RunStatus, StepStatus, Usage } from './run';

export type { ActivityActionType };

export interface ActionStepRequest {
  run_id: string;
  /** The execution id (domain/exec-id.ts): the step id, or `step[i]` / `step#n` inside maps and loops. */
  step_id: string;
  action_type: ActivityActionType;
  /** Rendered config (may still hold OutputRefs, which the activity resolves). */
  config: JsonObject;
  /** Rendered step input. */
  input: JsonValue;
  /** The step's attempt limit: the activity marks the step failed on the last one. */
  max_attempts: number;
}

export interface ActionStepResult {
  output: JsonValue | OutputRef;
  /** False when the activity could not record the step's completion (database unreachable): the workflow does. */
  projected?: false;
}

/** An error of one step, as the status view shows it. */
export interface StepError {
  /** Stable code, e.g. `non_retryable`, `attempts_exhausted`, `rejected`, `timeout`, `cancelled`. */
  reason: string;
  message: string;
  /** The failure code of the last attempt (e.g. `http_4xx`, `invalid_config`), when there is one. */
  code?: string;
}

/** An approval waiting for its decision, as the inbox shows it. */
export interface ApprovalRequest {
  message: string;
  instructions: string | null;
  /** Workflow time the wait began, ISO-8601. */
  waiting_since: string;
  /** When the approval times out (ISO-8601), or null without `timeout_seconds`. */
  deadline: string | null;
}

/**
 * Projection writes the workflow makes (steps it performs itself, agent completion, and the graph's own events:
 * skips, recorded failures, map and loop progress). Each is idempotent by execution id.
 */
export type StepEvent =
  /** `items`: a map step starting, with its number of items. */
  /** `input`: what the execution was given, rendered (shown in the status; absent in older histories). */
  | { kind: 'running'; items?: number; input?: JsonValue }
  /** `approval`: what the approver is asked (the approvals inbox lists it); absent in histories from before it. */
  | { kind: 'waiting'; approval?: ApprovalRequest; input?: JsonValue }
  /** The output is stored by reference when large; the write returns what it stored. */
  | { kind: 'completed'; output: JsonValue | OutputRef; usage?: Usage; turns?: number }
  | { kind: 'skipped'; reason: string }
  /** A failure the run goes on after (`on_error: continue`, or a map item with `on_item_error: continue`). */
  | {
      kind: 'failed';
      error: StepError;
      /** The calls the execution made before it failed (absent in older histories). */
      usage?: Usage;
      /** What later steps read as its output (`{error}`): the status shows the same. */
      output?: JsonValue;
    }
  /** A sub-workflow execution started its child run (Temporal's run id of it, so the reconciler knows it started). */
  | { kind: 'child'; child_run_id: string; temporal_run_id?: string };

export interface StepProjection {
  run_id: string;
  /** The execution id. */
  step_id: string;
  event: StepEvent;
}

/** What the workflow (or the worker's reconciler) records when a run ends. */
export interface RunOutcome {
  status: Extract<RunStatus, 'completed' | 'failed' | 'cancelled' | 'timed_out'>;
  error: RunError | null;
  /** Steps whose status changes with the end of the run (the one that stopped it, those never reached). */
  /** `usage`: the calls a step ending with the run made (the workflow's count; never lowers a stored one). */
  stepUpdates?: { id: string; status: StepStatus; error?: StepError | null; skip_reason?: string; usage?: Usage }[];
}

export interface OutcomeRequest {
  run_id: string;
  outcome: RunOutcome;
}

/** ApplicationFailure type the run workflow fails with; its first detail is the RunError. */
export const RUN_FAILED_FAILURE_TYPE = 'run_failed';

/** Sent before a sub-workflow starts (temporal/activities/projection.ts prepareChildRun). */
export interface ChildRunRequest {
  snapshot: RunSnapshot;
  input_schema?: JsonObject;
}

export type ChildRunVerdict = { ok: true } | { ok: false; problem: string };
