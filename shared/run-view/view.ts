/**
 * Run → JSON: the status body of `GET /api/v1/workflows/runs/:runId/status` (and the items of a workflow's run list),
 * and the `data` of a completion webhook. Pure: outputs are the resolved values (large ones are read from the blobs
 * collection before presenting, ./outputs.ts). The API owns the response shape; the worker's webhook activity builds
 * its bodies through ./build.ts, so both send the very same view.
 *
 * This folder is the run view's one home: the schemas and presenters (here, ./webhooks.ts, ./time.ts), the reads they
 * need besides the run document (./outputs.ts, ./reads.ts) and `buildRunView` (./build.ts), which joins the two.
 */
import { z } from 'zod';
import type { Config } from '../../config';
import { ACTION_TYPES } from '../../domain/action-types';
import type { JsonValue } from '../../domain/json';
import { TERMINAL_RUN_STATUSES } from '../../domain/run';
import { sumUsage } from '../../domain/usage';
import { runStatusSchema, stepStatusSchema } from '../../domain/run-status';
import { deriveRunStatus } from '../../domain/run-state';
import type { RunDoc, RunLiveness } from '../../db/runs';
import type { ExecutionCounts, StepExecutionDoc } from '../../db/step-executions';
import type { WebhookDeliveryDoc } from '../../db/webhook-deliveries';
import { iso, isoOrNull, isoTimestamp } from './time';
import { presentWebhookDelivery, webhookDeliveryView } from './webhooks';

const usageView = z.strictObject({
  llm_calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  estimated: z
    .literal(true)
    .optional()
    .meta({
      description:
        'Present when some of the tokens are estimates: a provider reported no usage for a call (docs/runs.md, ' +
        '"Token usage"). Budgets count the estimates.',
    }),
});

const budgetView = z
  .strictObject({
    max_tokens: z.number().int(),
    max_model_calls: z.number().int(),
    tokens_used: z.number().int().meta({ description: 'Input + output tokens of the run so far.' }),
    model_calls_used: z.number().int(),
  })
  .nullable()
  .meta({
    description:
      'The run budget and its use; a run that would exceed it fails with `error.reason: budget_exceeded`. ' +
      'Null for runs started before budgets existed.',
  });

const stepErrorView = z.strictObject({
  reason: z.string(),
  message: z.string(),
  code: z
    .string()
    .optional()
    .meta({ description: 'The failure code of the last attempt (e.g. `http_4xx`), when there is one.' }),
});

/** Executions shown inline per map or loop step; the rest are paged at …/steps/:stepId/executions. */
export const EXECUTIONS_SHOWN = 50;

export const executionView = z
  .strictObject({
    exec_id: z.string().meta({ description: '`<step>[<index>]` for a map item, `<step>#<iteration>` for a loop.' }),
    position: z.number().int().meta({ description: 'Item index (0-based) or iteration (1-based).' }),
    status: stepStatusSchema,
    attempts: z.number().int(),
    input: z.unknown().meta({ description: 'What the execution was given, rendered (null until it starts).' }),
    output: z.unknown().meta({ description: 'Null until done; `{stored_by_reference: true, bytes}` over 64 KiB.' }),
    error: stepErrorView.nullable(),
    usage: usageView,
    turns: z.number().int().nullable(),
    child_run_id: z.string().nullable(),
    started_at: isoTimestamp.nullable(),
    completed_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'StepExecution' });

const countsView = z.strictObject({
  total: z.number().int().meta({ description: 'Map: the number of items; loop: iterations started.' }),
  pending: z.number().int(),
  running: z.number().int(),
  waiting: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
});

export const runStepView = z.strictObject({
  id: z.string(),
  template_id: z.string(),
  template_name: z.string(),
  kind: z.enum(['agent', 'action', 'workflow']).meta({
    description: '`workflow`: a sub-workflow (template_id/template_name are its workflow id and name).',
  }),
  action_type: z.enum(ACTION_TYPES).nullable(),
  status: stepStatusSchema,
  when: z.string().nullable().meta({
    description: 'The step condition. With a condition, `status: skipped` means the branch was not taken.',
  }),
  skip_reason: z.string().nullable().meta({ description: 'Why the step was skipped.' }),
  child_run_id: z.string().nullable().meta({
    description:
      'Sub-workflow steps: the child run (readable at this endpoint; `~n` / `~in` suffixes inside maps and loops).',
  }),
  repeat: z.enum(['map', 'loop']).nullable(),
  depends_on: z.array(z.string()).nullable().meta({
    description: 'The steps this one waits for, as the run resolved them (null on runs recorded before it was kept).',
  }),
  reused_from_run_id: z.string().nullable().meta({
    description: 'A rerun step whose output was taken over from this run: nothing ran for it in this run.',
  }),
  executions: z
    .strictObject({
      counts: countsView,
      shown: z.array(executionView).meta({ description: `The first ${EXECUTIONS_SHOWN} items or iterations.` }),
      more_url: z.string().nullable().meta({ description: 'Where the rest are paged, when there are more.' }),
    })
    .nullable()
    .meta({ description: 'Map items or loop iterations, each with its own status, attempts, output and error.' }),
  attempts: z.number().int(),
  input: z.unknown().meta({
    description:
      "What the step was given, rendered: an agent step's input, an action's config (`{config, input}` when it has an " +
      "input), a sub-workflow's input; `{not_shown: true, bytes}` over 64 KiB; null until it starts and on older runs.",
  }),
  output: z.unknown().meta({
    description:
      'The step output (null until the step completes; for a step that failed with `on_error: continue`, its ' +
      '`{error}`); for an output over 64 KiB `{stored_by_reference: true, bytes}` — the value itself is in `outputs`.',
  }),
  error: stepErrorView.nullable(),
  usage: usageView,
  turns: z.number().int().nullable(),
  egress_denied: z.array(z.strictObject({ seq: z.number().int(), tool: z.string(), target: z.string() })).meta({
    description:
      "Agent steps: tool calls refused by the step's egress policy (the model got an error result; `seq` is the " +
      'transcript entry).',
  }),
  mcp_problems: z.array(z.string()).meta({
    description:
      'Agent steps: why MCP tools are missing from what the model was shown — a server refused (a private address ' +
      'not in HTTP_ALLOWED_HOSTS, outside the egress policy), unreachable or failing, a tool over a bound; also a ' +
      "`step.warning` event. At most 20; the transcript has every execution's.",
  }),
  started_at: isoTimestamp.nullable(),
  completed_at: isoTimestamp.nullable(),
});

export const runView = z
  .strictObject({
    run_id: z.string(),
    workflow_id: z.string(),
    workflow_name: z.string(),
    schedule_id: z
      .string()
      .optional()
      .meta({ description: 'Runs started by a schedule: its id (absent on other runs).' }),
    status: runStatusSchema.meta({
      description: 'queued → running ⇄ waiting → completed | failed | cancelled | timed_out',
    }),
    input: z.record(z.string(), z.unknown()),
    outputs: z.record(z.string(), z.unknown()).meta({
      description:
        'Output of every completed step, by step id, and of every step that failed with `on_error: continue` ' +
        '(`{error: {reason, message, code}}`, what later steps read).',
    }),
    steps: z.array(runStepView),
    error: z
      .strictObject({
        step_id: z.string().nullable(),
        reason: z.string(),
        message: z.string(),
        code: z.string().optional(),
      })
      .nullable()
      .meta({ description: 'Why a failed, cancelled or timed-out run ended, and at which step.' }),
    usage: usageView.meta({ description: 'LLM usage summed over the steps.' }),
    budget: budgetView,
    progress: z
      .strictObject({ stalled: z.boolean(), message: z.string().nullable(), checked_at: isoTimestamp.nullable() })
      .meta({ description: 'Whether the run is progressing, as last checked against Temporal.' }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    started_at: isoTimestamp.nullable(),
    completed_at: isoTimestamp.nullable(),
    rerun_of: z.string().nullable().meta({ description: 'The run this one reruns (POST …/rerun).' }),
    rerun_overrides: z
      .record(z.string(), z.strictObject({ model: z.string() }))
      .nullable()
      .meta({ description: "A rerun's changes to agent steps (their model), by step id; null when none." }),
    trace_id: z
      .string()
      .nullable()
      .meta({
        description:
          'The OpenTelemetry trace of the request that started the run, carried through its workflow and activities ' +
          '(open it in the tracing UI); null when tracing was off.',
      }),
    reruns: z.array(z.string()).meta({ description: 'Reruns started from this run, oldest first.' }),
    temporal: z.strictObject({
      namespace: z.string(),
      workflow_id: z.string(),
      run_id: z.string().nullable(),
      ui_url: z.string().meta({ description: 'The run in the Temporal Web UI.' }),
    }),
    webhooks: z.array(webhookDeliveryView).meta({
      description:
        'Completion webhooks of the run (`callback_url`): each delivery with its attempts. Empty until the run has ' +
        'ended, and for runs without a callback URL.',
    }),
  })
  .meta({ id: 'RunStatus' });

export type RunView = z.infer<typeof runView>;

function stepOutput(out: PresentableOutput | undefined): JsonValue {
  if (out === undefined) return null;
  return out.storedBytes === undefined ? out.value : { stored_by_reference: true, bytes: out.storedBytes };
}

export function temporalUiUrl(uiBase: string, namespace: string, workflowId: string, runId: string | null): string {
  const base = `${uiBase.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}

/** A map or loop step's executions as read for the status view (db/step-executions.ts). */
export interface PresentableExecutions {
  shown: StepExecutionDoc[];
  counts: ExecutionCounts;
}

function execOutput(json: string | null): JsonValue {
  if (json === null) return null;
  const value = JSON.parse(json) as JsonValue;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value.stepwise_blob === 'string') {
    return { stored_by_reference: true, bytes: typeof value.bytes === 'number' ? value.bytes : 0 };
  }
  return value;
}

/** A recorded input (JSON text), or null when none was recorded. */
function parsedInput(json: string | null | undefined): JsonValue {
  return json ? (JSON.parse(json) as JsonValue) : null;
}

export function presentExecution(e: StepExecutionDoc): z.infer<typeof executionView> {
  return {
    exec_id: e.exec_id,
    position: e.position,
    status: e.status,
    attempts: e.attempts,
    input: parsedInput(e.input_json),
    output: execOutput(e.output_json),
    error: e.error,
    usage: e.usage,
    turns: e.turns,
    child_run_id: e.child_run_id,
    started_at: isoOrNull(e.started_at),
    completed_at: isoOrNull(e.completed_at),
  };
}

function presentExecutions(
  step: Omit<RunDoc, 'snapshot'>['steps'][number],
  found: PresentableExecutions | undefined,
  moreUrl: string,
): z.infer<typeof runStepView>['executions'] {
  if (!step.repeat) return null;
  const by = found?.counts.by_status ?? {};
  const seen = found?.counts.total ?? 0;
  const total = step.repeat === 'map' ? Math.max(step.items_total ?? seen, seen) : seen;
  return {
    counts: {
      total,
      pending: (by.pending ?? 0) + Math.max(total - seen, 0),
      running: by.running ?? 0,
      waiting: by.waiting ?? 0,
      completed: by.completed ?? 0,
      failed: by.failed ?? 0,
      skipped: by.skipped ?? 0,
    },
    shown: (found?.shown ?? []).map(presentExecution),
    more_url: seen > EXECUTIONS_SHOWN ? moreUrl : null,
  };
}

/**
 * The run a view is presented from: the stored projection, or what the API's status read derived from it and Temporal
 * without writing it (api/commands/run-status/). `liveness` is never stored: a read that asked Temporal fills it in.
 */
export type PresentableRun = Omit<RunDoc, 'snapshot'> & { liveness?: RunLiveness | undefined };

/** A resolved step output (see ./outputs.ts). */
export interface PresentableOutput {
  value: JsonValue;
  storedBytes?: number;
}

/**
 * `outputs`: resolved output of each step that has one, by step id. A large output (stored by reference) appears in
 * full once, in `outputs`; its step shows `{stored_by_reference: true, bytes}` so the body does not carry it twice.
 */
export function presentRun(
  run: PresentableRun,
  outputs: ReadonlyMap<string, PresentableOutput>,
  config: Pick<Config, 'TEMPORAL_UI_URL'>,
  executions: ReadonlyMap<string, PresentableExecutions> = new Map(),
  webhooks: readonly WebhookDeliveryDoc[] = [],
): RunView {
  const completed: Record<string, JsonValue> = {};
  for (const step of run.steps) {
    const out = outputs.get(step.id);
    // A failed step has an output only when the run went on after it (`on_error: continue`): its `{error}`.
    if ((step.status === 'completed' || step.status === 'failed') && out !== undefined) completed[step.id] = out.value;
  }
  // Computed by the status read that asked Temporal (api/commands/run-status/read.ts); never stored.
  const stalled =
    !TERMINAL_RUN_STATUSES.includes(run.status) &&
    run.liveness?.stalled === true &&
    run.liveness.checked_at.getTime() >= run.updated_at.getTime();
  const usage = sumUsage(run.steps.map((s) => s.usage));
  // A map or loop step whose only open executions wait for a decision is itself waiting.
  const shownSteps = run.steps.map((s) => {
    const by = executions.get(s.id)?.counts.by_status;
    const waitsOnly = s.status === 'running' && by && (by.waiting ?? 0) > 0 && (by.running ?? 0) === 0;
    return { id: s.id, status: waitsOnly ? ('waiting' as const) : s.status };
  });
  return {
    run_id: run._id,
    workflow_id: run.workflow_id,
    workflow_name: run.workflow_name,
    ...(run.schedule_id !== undefined ? { schedule_id: run.schedule_id } : {}),
    status: deriveRunStatus(run.status, shownSteps),
    input: run.input,
    outputs: completed,
    steps: run.steps.map((s, i) => ({
      id: s.id,
      template_id: s.template_id,
      template_name: s.template_name,
      kind: s.kind,
      action_type: s.action_type,
      status: shownSteps[i]?.status ?? s.status,
      when: s.when ?? null,
      skip_reason: s.skip_reason ?? null,
      child_run_id: s.child_run_id ?? null,
      repeat: s.repeat ?? null,
      depends_on: s.depends_on ?? null,
      reused_from_run_id: s.reused_from_run_id ?? null,
      executions: presentExecutions(
        s,
        executions.get(s.id),
        `/api/v1/workflows/runs/${encodeURIComponent(run._id)}/steps/${s.id}/executions`,
      ),
      attempts: s.attempts,
      input: parsedInput(s.input_json),
      output: stepOutput(outputs.get(s.id)),
      error: s.error,
      usage: s.usage,
      turns: s.turns,
      // Tool calls of one turn run concurrently: show the refusals in transcript order.
      egress_denied: [...(s.egress_denied ?? [])].sort((a, b) => a.seq - b.seq),
      mcp_problems: s.mcp_problems ?? [],
      started_at: isoOrNull(s.started_at),
      completed_at: isoOrNull(s.completed_at),
    })),
    error: run.error,
    usage,
    budget: run.budget
      ? {
          max_tokens: run.budget.max_tokens,
          max_model_calls: run.budget.max_model_calls,
          tokens_used: usage.input_tokens + usage.output_tokens,
          model_calls_used: usage.llm_calls,
        }
      : null,
    progress: {
      stalled,
      message: stalled ? (run.liveness?.message ?? null) : null,
      checked_at: isoOrNull(run.liveness?.checked_at),
    },
    created_at: iso(run.created_at),
    updated_at: iso(run.updated_at),
    started_at: isoOrNull(run.started_at ?? null),
    completed_at: isoOrNull(run.completed_at),
    rerun_of: run.rerun_of ?? null,
    rerun_overrides: run.rerun_overrides ?? null,
    trace_id: run.trace_id ?? null,
    reruns: run.reruns ?? [],
    temporal: {
      namespace: run.temporal.namespace,
      workflow_id: run._id,
      run_id: run.temporal.run_id,
      ui_url: temporalUiUrl(config.TEMPORAL_UI_URL, run.temporal.namespace, run._id, run.temporal.run_id),
    },
    webhooks: webhooks.map(presentWebhookDelivery),
  };
}

export const runSummaryView = z
  .strictObject({
    run_id: z.string(),
    workflow_id: z.string(),
    schedule_id: runView.shape.schedule_id,
    status: runStatusSchema,
    error: runView.shape.error,
    created_at: isoTimestamp,
    started_at: isoTimestamp.nullable(),
    completed_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'RunSummary' });

export type RunSummaryView = z.infer<typeof runSummaryView>;

/** An item of GET /workflows/:id/runs (the full body is at the status endpoint). */
export function presentRunSummary(run: Omit<RunDoc, 'snapshot'>): RunSummaryView {
  return {
    run_id: run._id,
    workflow_id: run.workflow_id,
    ...(run.schedule_id !== undefined ? { schedule_id: run.schedule_id } : {}),
    status: deriveRunStatus(run.status, run.steps),
    error: run.error,
    created_at: iso(run.created_at),
    started_at: isoOrNull(run.started_at ?? null),
    completed_at: isoOrNull(run.completed_at),
  };
}
