/**
 * The run contract: what the API hands to Temporal when it starts a run (an immutable snapshot of the workflow and
 * of every template it uses), and what the workflow reports back. Workflow-safe: types and pure constants only.
 */
import type { ActionType } from '../actions/types';
import type { EgressPolicy } from './egress';
import type { JsonObject, JsonValue } from './json';

export type { ActionType };

export interface RetrySettings {
  /** Total attempts including the first (1 = no retry). */
  max_attempts: number;
}

interface StepSnapshotBase {
  /** Unique slug within the workflow. */
  id: string;
  template_id: string;
  template_name: string;
  /** The step's input with `{{input.x}}` / `{{steps.<id>.output…}}` references still unrendered. */
  input: JsonValue;
  retry: RetrySettings;
  /** Start-to-close timeout of each activity attempt of this step. */
  timeout_seconds: number;
}

export interface AgentStepSnapshot extends StepSnapshotBase {
  kind: 'agent';
  /** System prompt: the step's override or the template's default_prompt. */
  prompt: string;
  tasks: string[];
  tools: string[];
  /** `provider:model`, e.g. `openai:gpt-4o-mini`. */
  model: string;
  max_turns: number;
  output_schema?: JsonObject;
  /** Sampling settings from the agent template's `config`, passed to the provider. */
  temperature?: number;
  max_output_tokens?: number;
  /**
   * Where its tools may send e-mail and HTTP requests (template settings with the step's fields replacing them).
   * Absent in snapshots taken before egress policies existed: those runs get DEFAULT_EGRESS.
   */
  egress?: EgressPolicy;
}

export interface ActionStepSnapshot extends StepSnapshotBase {
  kind: 'action';
  action_type: ActionType;
  /** template.config merged with the step's config override; `{{…}}` strings are rendered at run time. */
  config: JsonObject;
}

export type StepSnapshot = AgentStepSnapshot | ActionStepSnapshot;

/** The spending limits of one run, summed over all its steps' model calls. */
export interface RunBudget {
  /** Input + output tokens. */
  max_tokens: number;
  max_model_calls: number;
}

/** ApplicationFailure type (and the run's error reason) when a run or a user has spent their budget. */
export const BUDGET_EXCEEDED_FAILURE_TYPE = 'budget_exceeded';

export interface RunSnapshot {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  owner_id: string;
  input: JsonObject;
  steps: StepSnapshot[];
  /** The run's effective budget. Absent in runs started before budgets existed: those run (and replay) unchecked. */
  budget?: RunBudget;
  created_at: string;
}

/** A step output too large for Temporal payloads, kept in MongoDB's `blobs` collection. */
export interface OutputRef {
  stepwise_blob: string;
  bytes: number;
}

export function isOutputRef(value: unknown): value is OutputRef {
  return typeof value === 'object' && value !== null && typeof (value as OutputRef).stepwise_blob === 'string';
}

/** Outputs above this size (serialised JSON) are stored by reference. */
export const OUTPUT_INLINE_LIMIT_BYTES = 64 * 1024;

export type RunStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'timed_out';
export type StepStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped';
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'timed_out'];

export interface RunError {
  step_id: string | null;
  /** Stable reason code, e.g. `non_retryable`, `attempts_exhausted`, `rejected`, `turn_limit`, `timeout`. */
  reason: string;
  message: string;
  /** The failure code of the last attempt (e.g. `http_4xx`, `invalid_config`), when there is one. */
  code?: string;
}

export interface Usage {
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface RunResult {
  outputs: Record<string, JsonValue | OutputRef>;
  usage: Usage;
}
