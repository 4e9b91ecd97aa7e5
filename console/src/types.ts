/**
 * Shapes of the API responses the console reads (api/presenters, db/run-view/view.ts). Written by hand from the
 * OpenAPI document: the console only reads these fields, so a field added on the server never breaks it.
 */

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type StepStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped';

/** Run statuses that may still change: lists and pages keep refreshing while one is shown. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting'];

export interface Usage {
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export interface StepError {
  reason: string;
  message: string;
}

export interface RunError extends StepError {
  step_id: string | null;
  code?: string;
}

export interface RunSearchItem {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  status: RunStatus;
  error: RunError | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  usage: Usage;
  duration_ms: number | null;
}

export interface ExecutionCounts {
  total: number;
  pending: number;
  running: number;
  waiting: number;
  completed: number;
  failed: number;
  skipped: number;
}

export interface StepExecution {
  exec_id: string;
  position: number;
  status: StepStatus;
  attempts: number;
  /** What it was given, rendered (null until it starts). */
  input: unknown;
  output: unknown;
  error: StepError | null;
  usage: Usage;
  turns: number | null;
  child_run_id: string | null;
  started_at: string | null;
  completed_at: string | null;
}

export interface RunStep {
  id: string;
  template_id: string;
  template_name: string;
  kind: 'agent' | 'action' | 'workflow';
  action_type: string | null;
  status: StepStatus;
  when: string | null;
  skip_reason: string | null;
  child_run_id: string | null;
  repeat: 'map' | 'loop' | null;
  /** As the run resolved them; null on runs recorded before the status carried them. */
  depends_on: string[] | null;
  reused_from_run_id: string | null;
  executions: { counts: ExecutionCounts; shown: StepExecution[]; more_url: string | null } | null;
  attempts: number;
  /** What it was given, rendered; null until it starts and on runs recorded before inputs were kept. */
  input: unknown;
  output: unknown;
  error: StepError | null;
  usage: Usage;
  turns: number | null;
  egress_denied: { seq: number; tool: string; target: string }[];
  started_at: string | null;
  completed_at: string | null;
}

export interface RunView {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  status: RunStatus;
  input: Record<string, unknown>;
  outputs: Record<string, unknown>;
  steps: RunStep[];
  error: RunError | null;
  usage: Usage;
  budget: { max_tokens: number; max_model_calls: number; tokens_used: number; model_calls_used: number } | null;
  progress: { stalled: boolean; message: string | null; checked_at: string | null };
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  rerun_of: string | null;
  rerun_overrides: Record<string, { model: string }> | null;
  reruns: string[];
  temporal: { namespace: string; workflow_id: string; run_id: string | null; ui_url: string };
}

export interface WorkflowStep {
  id: string;
  template_id?: string;
  workflow_id?: string;
  depends_on?: string[];
  when?: string;
  trigger?: string;
  on_error?: string;
  map?: { over: string; concurrency?: number; on_item_error?: string };
  loop?: { until: string; max_iterations: number };
  prompt?: string;
  tools?: string[];
  tasks?: string[];
  max_turns?: number;
  output_schema?: Record<string, unknown>;
  model?: string;
  config?: Record<string, unknown>;
  input?: unknown;
  retry?: { max_attempts: number };
  timeout_seconds?: number;
}

export interface Workflow {
  id: string;
  name: string;
  description: string | null;
  steps: WorkflowStep[];
  config: { input_schema?: Record<string, unknown>; timeout_seconds?: number; [key: string]: unknown };
  created_at: string;
  updated_at: string;
}

export interface Approval {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  step_id: string;
  message: string;
  instructions: string | null;
  waiting_since: string;
  deadline: string | null;
}

export interface Template {
  id: string;
  name: string;
  default_prompt: string;
  default_tools: string[];
  default_tasks: string[];
  tags: string[];
  short_description: string | null;
  step_type: 'agent' | 'action';
  action_type: string | null;
  model: string | null;
  config: Record<string, unknown>;
  max_turns: number | null;
  output_schema: Record<string, unknown> | null;
  system: boolean;
}

export interface ToolInfo {
  name: string;
  description: string;
  parameters: unknown;
}

export interface ActionInfo {
  name: string;
  description: string;
  config_schema: unknown;
}

export type TranscriptEntry =
  | { seq: number; role: 'user'; text: string; repair: boolean; at: string }
  | {
      seq: number;
      role: 'assistant';
      turn: number;
      text: string | null;
      tool_calls: { id: string; name: string; args: unknown; invalid_args?: string }[];
      usage: { input_tokens: number; output_tokens: number };
      finish_reason: string;
      final: boolean;
      at: string;
    }
  | {
      seq: number;
      role: 'tool';
      turn: number;
      call_id: string;
      name: string;
      args: unknown;
      result: unknown;
      is_error: boolean;
      error_code: string | null;
      truncated: boolean;
      at: string;
    };

export interface Transcript {
  run_id: string;
  step_id: string;
  status: string;
  model: string | null;
  tools: string[];
  system_prompt: string | null;
  max_turns: number | null;
  turns: number | null;
  usage: Usage;
  final_answer: string | null;
  entries: TranscriptEntry[];
}

export interface StartedRun {
  run_id: string;
  workflow_id: string;
  status: RunStatus;
}
