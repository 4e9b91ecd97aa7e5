/**
 * The run contract: what the API hands to Temporal when it starts a run (an immutable snapshot of the workflow and
 * of every template it uses), and what the workflow reports back. Workflow-safe: types and pure constants only. The
 * status enums are zod's, in ./run-status.ts: the workflow bundle runs a module's code again for every execution, and
 * this one's would bring zod's with it into every run.
 */
import type { McpServerSelection } from './mcp';
import type { ActionType } from './action-types';
import type { EgressPolicy } from './egress';
import type { ReplayToolCalls } from './experiment';
import type { OnError, Trigger } from './graph';
import type { JsonObject, JsonValue } from './json';
import type { RunStatus, StepStatus } from './run-status';
import type { ThreadRef } from './thread';

export type { ActionType, RunStatus, StepStatus };

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
  /**
   * Graph fields (see docs/graphs.md). Absent in snapshots taken before graphs existed, which run in list order.
   * `depends_on` is always resolved in newer snapshots (the "previous step" default filled in).
   */
  depends_on?: string[];
  /** Condition (domain/condition.ts); false → the step is `skipped`. */
  when?: string;
  trigger?: Trigger;
  on_error?: OnError;
  map?: MapSettings;
  loop?: LoopSettings;
}

/** Runs the step once per item of a list. */
export interface MapSettings {
  /** One reference to the list: `{{input.customers}}` or `{{steps.<id>.output.items}}`. */
  over: string;
  /** Items running at once. */
  concurrency: number;
  /** `fail`: the first failed item fails the step; `continue`: it is recorded (its result is `{error}`). */
  on_item_error: OnError;
}

/** Repeats the step until a condition holds, at most `max_iterations` times. */
export interface LoopSettings {
  until: string;
  max_iterations: number;
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
  /** Tools from the owner's MCP servers (absent when the step uses none, and in snapshots from before MCP). */
  mcp_tools?: McpServerSelection[];
  /**
   * A thread's turn (docs/threads.md): the conversation opens with the thread's earlier turns that fit and the turn's
   * user message, read from MongoDB by these ids. Absent on every other agent step.
   */
  thread?: ThreadRef;
  /**
   * A workflow's agent step that takes a turn in a thread (decision 0603): the step's `thread` as written, rendered
   * like its input when the step runs to the thread's id. Absent on every other agent step (and on turn runs).
   */
  in_thread?: string;
}

export interface ActionStepSnapshot extends StepSnapshotBase {
  kind: 'action';
  action_type: ActionType;
  /** template.config merged with the step's config override; `{{…}}` strings are rendered at run time. */
  config: JsonObject;
  /**
   * The action's declaration says `effect: 'pure'`: the workflow runs it as a local activity. Taken from the catalog
   * when the run starts, so the workflow never loads the catalog (zod, in every execution's sandbox) and a run
   * replays the same way whatever a later build declares.
   */
  pure?: true;
}

/** Runs another workflow of the owner as a Temporal child workflow (a run of its own, with its own run id). */
export interface WorkflowStepSnapshot extends StepSnapshotBase {
  kind: 'workflow';
  /** The sub-workflow as it was when the parent run started (template_id/template_name hold its id and name). */
  workflow: ChildWorkflowSnapshot;
}

export interface ChildWorkflowSnapshot {
  workflow_id: string;
  workflow_name: string;
  /** Checked against the rendered step input when the child starts. */
  input_schema?: JsonObject;
  steps: StepSnapshot[];
  /** Run timeout of the sub-workflow's own config, if it has one. */
  timeout_seconds?: number;
}

export type StepSnapshot = AgentStepSnapshot | ActionStepSnapshot | WorkflowStepSnapshot;

/** The graph limits in force when the run started (config.ts: MAP_MAX_ITEMS, …), enforced again at run time. */
export interface GraphLimits {
  map_max_items: number;
  map_max_concurrency: number;
  loop_max_iterations: number;
  /** Sub-workflow nesting: 1 = a workflow may call workflows that call none. */
  max_depth: number;
}

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
  /** Absent in runs started before graphs existed. */
  limits?: GraphLimits;
  /** Set on a sub-workflow's run: the run and execution that started it, and how deep it is (1 = a child). */
  parent?: { run_id: string; exec_id: string; depth: number };
  /**
   * Set on a sub-workflow's run: the top-level run whose budget it spends. Each of its model calls is reserved there
   * first (temporal/workflows/budget-share.ts). Absent in children started before shared budgets: they spend a slice.
   */
  budget_root?: string;
  /**
   * Where the run's completion webhook goes (temporal/workflows/webhook.ts). Null or absent (snapshots from before
   * webhooks, sub-workflow runs): no webhook.
   */
  callback_url?: string | null;
  /** Set on a rerun (POST …/runs/:runId/rerun): the run it repeats, and the outputs of the steps it does not run. */
  rerun?: RerunOrigin;
  /**
   * When the run times out (ISO-8601; its `timeout_seconds` from when it was recorded), raced by a workflow timer
   * (temporal/workflows/deadline.ts). Added by the Temporal start only (shared/runs/start-execution.ts), never stored
   * with the run's snapshot. Absent: no time limit, or a run started before the timer existed.
   */
  deadline_at?: string;
}

export interface RerunOrigin {
  run_id: string;
  from_step: string;
  /**
   * Outputs of the source run's completed steps as JSON text (a value or an OutputRef), by step id: the workflow
   * takes them as finished and runs nothing for them. Text, because the snapshot is also stored in MongoDB, which
   * refuses some keys outputs may hold.
   */
  reused_json: Record<string, string>;
  /**
   * Set when the run replays a recorded run for an experiment (mode `replay`): how the tool calls of the steps that
   * run again are answered (domain/experiment.ts REPLAY_TOOL_CALLS), from `run_id`'s transcript of the same step.
   */
  tool_calls?: ReplayToolCalls;
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

export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'timed_out'];
export const IN_FLIGHT_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting'];

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
  /** Set (true) when some of the tokens counted are estimates: a provider reported no usage for a call. */
  estimated?: true;
}

export interface RunResult {
  outputs: Record<string, JsonValue | OutputRef>;
  usage: Usage;
  /** A sub-workflow's outputs when they are too large for the result (stored by reference; `outputs` is empty). */
  outputs_ref?: OutputRef;
  /** How each step ended (absent in results of runs from before graphs, where every step completed). */
  steps?: Record<string, StepStatus>;
}
