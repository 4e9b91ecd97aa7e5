/**
 * The Stepwise metrics the worker counts (prom-client), each at exactly one place: scheduled runs started (their
 * first activity), runs finished (the outcome write that turns the run terminal), action-step and agent-turn attempts,
 * classified attempt failures, model calls and tokens, tool calls, SSRF refusals, run starts taken over from the API.
 * Labels are low-cardinality by construction: never a user, run or step id. The Temporal SDK's own worker metrics
 * come from its Runtime (temporal/telemetry-runtime.ts), not from here.
 */
import type { Registry } from 'prom-client';
import { boundedLabel } from '../shared/metrics/bounded-label';
import { declareMetrics } from '../shared/metrics/declare';
import type { RunKind } from '../shared/metrics/run-kind';
import { runsStartedCounter } from '../shared/metrics/runs-started';

/** Seconds; runs span sub-second action-only flows to hour-long agent runs. */
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];
/** Seconds; one step attempt or one model call. */
const CALL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Distinct model / tool label values kept before `other`. */
const MAX_MODELS = 50;
const MAX_TOOLS = 50;

export type AttemptOutcome = 'completed' | 'failed';
export type ToolOutcome = 'ok' | 'error' | 'denied';
/** `refused`: a destructive MCP tool the step does not allow (never sent). */
export type McpOutcome = ToolOutcome | 'refused';

export interface WorkerMetrics {
  /** A scheduled run recorded by its first activity (the API counts the runs it starts itself). */
  runStarted(kind: RunKind): void;
  /** `reason`: the run error's reason (`budget_exceeded`, `timeout`, …), `none` for a completed run. */
  runFinished(kind: RunKind, status: string, reason: string, seconds: number | null): void;
  /**
   * One attempt of a step: an action step's execution (`delay` and `approval`, which the workflow performs itself,
   * counted once when the run ends), or one model call of an agent step.
   */
  stepAttempt(kind: 'action' | 'agent', actionType: string, outcome: AttemptOutcome, seconds: number): void;
  /** A failed attempt, by its classified reason; `final` when Temporal will not retry it. */
  stepFailure(reason: string, final: boolean): void;
  modelCall(
    provider: string,
    model: string,
    ok: boolean,
    seconds: number,
    usage?: { input_tokens: number; output_tokens: number },
  ): void;
  toolCall(tool: string, outcome: ToolOutcome): void;
  /** A URL refused by the SSRF guard (url_refused), by where it came from. */
  ssrfRefusal(via: 'action' | 'tool'): void;
  /** One MCP request of an agent step, by method and outcome (no server or tool names: users choose those). */
  mcpCall(method: 'list_tools' | 'call_tool', outcome: McpOutcome): void;
}

export function createWorkerMetrics(registry: Registry): WorkerMetrics {
  const { counter, histogram } = declareMetrics(registry);
  const runStarted = runsStartedCounter(registry);
  const runsFinished = counter(
    'stepwise_runs_finished_total',
    'Top-level runs that reached a terminal status, by status, error reason and workflow kind',
    ['kind', 'status', 'reason'],
  );
  const runDuration = histogram(
    'stepwise_run_duration_seconds',
    'Time from a run being accepted to its terminal status, by status and workflow kind',
    ['kind', 'status'],
    RUN_BUCKETS,
  );
  const stepAttempts = counter(
    'stepwise_step_attempts_total',
    'Attempts of step activities (action steps; model calls of agent steps), by kind, action type and outcome',
    ['kind', 'action_type', 'outcome'],
  );
  const stepDuration = histogram(
    'stepwise_step_attempt_duration_seconds',
    'Duration of one step attempt, by kind, action type and outcome',
    ['kind', 'action_type', 'outcome'],
    CALL_BUCKETS,
  );
  const stepFailures = counter(
    'stepwise_step_failures_total',
    'Failed step attempts by classified reason; final="true" when the step is not retried',
    ['reason', 'final'],
  );
  const modelCalls = counter('stepwise_model_calls_total', 'Model calls by provider, model and outcome', [
    'provider',
    'model',
    'outcome',
  ]);
  const modelDuration = histogram(
    'stepwise_model_call_duration_seconds',
    'Latency of one model call (request to full answer), by provider and model',
    ['provider', 'model'],
    CALL_BUCKETS,
  );
  const modelTokens = counter(
    'stepwise_model_tokens_total',
    'Tokens reported by the provider, by provider, model and direction (input or output)',
    ['provider', 'model', 'direction'],
  );
  const toolCalls = counter(
    'stepwise_tool_calls_total',
    'Agent tool calls by tool and outcome (ok, error, denied by the egress policy)',
    ['tool', 'outcome'],
  );
  const mcpCalls = counter(
    'stepwise_mcp_requests_total',
    'MCP requests of agent steps by method (list_tools, call_tool) and outcome (ok, error, denied, refused)',
    ['method', 'outcome'],
  );
  const ssrf = counter(
    'stepwise_ssrf_refusals_total',
    'Outbound URLs refused by the SSRF guard, by origin (action step or agent tool)',
    ['via'],
  );
  const modelName = boundedLabel(MAX_MODELS);
  const toolName = boundedLabel(MAX_TOOLS);

  return {
    runStarted,
    runFinished(kind, status, reason, seconds) {
      runsFinished.labels(kind, status, reason).inc();
      if (seconds !== null) runDuration.labels(kind, status).observe(seconds);
    },
    stepAttempt(kind, actionType, outcome, seconds) {
      stepAttempts.labels(kind, actionType, outcome).inc();
      stepDuration.labels(kind, actionType, outcome).observe(seconds);
    },
    stepFailure: (reason, final) => stepFailures.labels(reason, final ? 'true' : 'false').inc(),
    modelCall(provider, model, ok, seconds, usage) {
      const m = modelName(model);
      modelCalls.labels(provider, m, ok ? 'ok' : 'error').inc();
      modelDuration.labels(provider, m).observe(seconds);
      if (usage) {
        modelTokens.labels(provider, m, 'input').inc(usage.input_tokens);
        modelTokens.labels(provider, m, 'output').inc(usage.output_tokens);
      }
    },
    toolCall: (tool, outcome) => toolCalls.labels(toolName(tool), outcome).inc(),
    mcpCall: (method, outcome) => mcpCalls.labels(method, outcome).inc(),
    ssrfRefusal: (via) => ssrf.labels(via).inc(),
  };
}
