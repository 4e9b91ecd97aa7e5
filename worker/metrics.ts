/**
 * The Stepwise metrics the worker counts (prom-client), each at exactly one place: scheduled runs started (their
 * first activity), runs finished (the outcome write that turns the run terminal), action-step and agent-turn attempts,
 * classified attempt failures, model calls and tokens, tool calls, SSRF refusals, run starts taken over from the API.
 * Labels are low-cardinality by construction: never a user, run or step id. The Temporal SDK's own worker metrics
 * come from its Runtime (worker/telemetry-runtime.ts), not from here.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { boundedLabel } from '../shared/metrics/bounded-label';
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
  const registers = [registry];
  const runStarted = runsStartedCounter(registry);
  const runsFinished = new Counter({
    name: 'stepwise_runs_finished_total',
    help: 'Top-level runs that reached a terminal status, by status, error reason and workflow kind',
    labelNames: ['kind', 'status', 'reason'] as const,
    registers,
  });
  const runDuration = new Histogram({
    name: 'stepwise_run_duration_seconds',
    help: 'Time from a run being accepted to its terminal status, by status and workflow kind',
    labelNames: ['kind', 'status'] as const,
    buckets: RUN_BUCKETS,
    registers,
  });
  const stepAttempts = new Counter({
    name: 'stepwise_step_attempts_total',
    help: 'Attempts of step activities (action steps; model calls of agent steps), by kind, action type and outcome',
    labelNames: ['kind', 'action_type', 'outcome'] as const,
    registers,
  });
  const stepDuration = new Histogram({
    name: 'stepwise_step_attempt_duration_seconds',
    help: 'Duration of one step attempt, by kind, action type and outcome',
    labelNames: ['kind', 'action_type', 'outcome'] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const stepFailures = new Counter({
    name: 'stepwise_step_failures_total',
    help: 'Failed step attempts by classified reason; final="true" when the step is not retried',
    labelNames: ['reason', 'final'] as const,
    registers,
  });
  const modelCalls = new Counter({
    name: 'stepwise_model_calls_total',
    help: 'Model calls by provider, model and outcome',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers,
  });
  const modelDuration = new Histogram({
    name: 'stepwise_model_call_duration_seconds',
    help: 'Latency of one model call (request to full answer), by provider and model',
    labelNames: ['provider', 'model'] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const modelTokens = new Counter({
    name: 'stepwise_model_tokens_total',
    help: 'Tokens reported by the provider, by provider, model and direction (input or output)',
    labelNames: ['provider', 'model', 'direction'] as const,
    registers,
  });
  const toolCalls = new Counter({
    name: 'stepwise_tool_calls_total',
    help: 'Agent tool calls by tool and outcome (ok, error, denied by the egress policy)',
    labelNames: ['tool', 'outcome'] as const,
    registers,
  });
  const mcpCalls = new Counter({
    name: 'stepwise_mcp_requests_total',
    help: 'MCP requests of agent steps by method (list_tools, call_tool) and outcome (ok, error, denied, refused)',
    labelNames: ['method', 'outcome'] as const,
    registers,
  });
  const ssrf = new Counter({
    name: 'stepwise_ssrf_refusals_total',
    help: 'Outbound URLs refused by the SSRF guard, by origin (action step or agent tool)',
    labelNames: ['via'] as const,
    registers,
  });
  // Children are looked up once per label combination and reused: no label object per event on the hot path.
  const modelName = boundedLabel(MAX_MODELS);
  const toolName = boundedLabel(MAX_TOOLS);
  const cache = new Map<string, ModelChildren>();
  interface ModelChildren {
    ok: Counter.Internal;
    error: Counter.Internal;
    latency: Histogram.Internal<string>;
    input: Counter.Internal;
    output: Counter.Internal;
  }
  const modelChildren = (provider: string, model: string): ModelChildren => {
    const key = `${provider}\u0000${model}`;
    let c = cache.get(key);
    if (!c) {
      const m = modelName(model);
      c = {
        ok: modelCalls.labels(provider, m, 'ok'),
        error: modelCalls.labels(provider, m, 'error'),
        latency: modelDuration.labels(provider, m),
        input: modelTokens.labels(provider, m, 'input'),
        output: modelTokens.labels(provider, m, 'output'),
      };
      cache.set(key, c);
    }
    return c;
  };
  // Action types come from the registry and kinds/outcomes are fixed: a bounded set of children, made once each.
  const attemptCache = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<string> }>();
  const viaAction = ssrf.labels('action');
  const viaTool = ssrf.labels('tool');

  return {
    runStarted,
    runFinished(kind, status, reason, seconds) {
      runsFinished.labels(kind, status, reason).inc();
      if (seconds !== null) runDuration.labels(kind, status).observe(seconds);
    },
    stepAttempt(kind, actionType, outcome, seconds) {
      const key = `${kind}\u0000${actionType}\u0000${outcome}`;
      let c = attemptCache.get(key);
      if (!c) {
        c = {
          count: stepAttempts.labels(kind, actionType, outcome),
          duration: stepDuration.labels(kind, actionType, outcome),
        };
        attemptCache.set(key, c);
      }
      c.count.inc();
      c.duration.observe(seconds);
    },
    stepFailure(reason, final) {
      stepFailures.labels(reason, final ? 'true' : 'false').inc();
    },
    modelCall(provider, model, ok, seconds, usage) {
      const c = modelChildren(provider, model);
      (ok ? c.ok : c.error).inc();
      c.latency.observe(seconds);
      if (usage) {
        c.input.inc(usage.input_tokens);
        c.output.inc(usage.output_tokens);
      }
    },
    toolCall(tool, outcome) {
      toolCalls.labels(toolName(tool), outcome).inc();
    },
    mcpCall(method, outcome) {
      mcpCalls.labels(method, outcome).inc();
    },
    ssrfRefusal(via) {
      (via === 'action' ? viaAction : viaTool).inc();
    },
  };
}
