/**
 * The API's answers as the CLI reads them: zod schemas of the fields it uses (loose, so fields the server adds later
 * pass through), checked at the edge so the commands can trust their types. The server's own schemas live in api/;
 * the CLI is a client of the published contract, not of the server's code.
 */
import { z } from 'zod';

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const usage = z.looseObject({
  llm_calls: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
});
const runError = z.looseObject({ reason: z.string(), message: z.string(), step_id: z.string().nullable().optional() });

/** An item of GET /api/v1/runs. */
export const runSearchItem = z.looseObject({
  run_id: z.string(),
  workflow_id: z.string(),
  workflow_name: z.string(),
  status: z.enum(RUN_STATUSES),
  error: runError.nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  usage,
  duration_ms: z.number().nullable(),
});
export type RunSearchItem = z.infer<typeof runSearchItem>;

/** The parts of the run status body (GET …/runs/:runId/status) a watch starts from. */
export const runStatusBody = z.looseObject({
  run_id: z.string(),
  workflow_id: z.string(),
  workflow_name: z.string(),
  status: z.enum(RUN_STATUSES),
  steps: z.array(
    z.looseObject({
      id: z.string(),
      status: z.string(),
      attempts: z.number().int(),
      usage,
      started_at: z.string().nullable(),
      completed_at: z.string().nullable(),
      // Optional: `runs get` shows them; a watch needs neither.
      error: z.looseObject({ reason: z.string(), message: z.string() }).nullable().optional(),
    }),
  ),
  error: runError.nullable(),
  created_at: z.string().optional(),
  completed_at: z.string().nullable().optional(),
  usage: usage.optional(),
  outputs: z.record(z.string(), z.unknown()).optional(),
});
export type RunStatusBody = z.infer<typeof runStatusBody>;

/** 202 of POST …/runs/:runId/cancel. */
export const cancelRequested = z.looseObject({ run_id: z.string(), cancel_requested: z.literal(true) });
export type CancelRequested = z.infer<typeof cancelRequested>;

/** An item of GET /api/v1/approvals. */
export const approvalItem = z.looseObject({
  run_id: z.string(),
  workflow_id: z.string(),
  workflow_name: z.string(),
  step_id: z.string(),
  message: z.string().nullable(),
  instructions: z.string().nullable(),
  waiting_since: z.string(),
  deadline: z.string().nullable(),
});
export type ApprovalItem = z.infer<typeof approvalItem>;

/** 202 of a run start and of a rerun (which adds `rerun_of`). */
export const runStarted = z.looseObject({
  run_id: z.string(),
  workflow_id: z.string(),
  status: z.string(),
  status_url: z.string(),
  rerun_of: z.string().nullable().optional(),
});
export type RunStarted = z.infer<typeof runStarted>;

export const approvalDecided = z.looseObject({ run_id: z.string(), step_id: z.string(), approved: z.boolean() });
export type ApprovalDecided = z.infer<typeof approvalDecided>;

// --- run events (the `data:` of GET …/runs/:runId/events; spec "Event stream") ---

const eventBase = { seq: z.number().int(), run_id: z.string(), at: z.string() };
const execBase = { ...eventBase, exec_id: z.string(), step_id: z.string() };
const stepError = z.looseObject({ reason: z.string(), message: z.string() });
const tokens = z.looseObject({ input_tokens: z.number(), output_tokens: z.number() });

export const runEvent = z.discriminatedUnion('type', [
  z.looseObject({ ...execBase, type: z.literal('step.started'), attempt: z.number().int() }),
  z.looseObject({ ...execBase, type: z.literal('step.retrying'), attempt: z.number().int(), error: stepError }),
  z.looseObject({ ...execBase, type: z.literal('step.waiting') }),
  z.looseObject({
    ...execBase,
    type: z.literal('step.completed'),
    output: z.unknown().optional(),
    output_ref: z.looseObject({ bytes: z.number() }).optional(),
    usage: tokens.optional(),
    reused_from_run_id: z.string().optional(),
  }),
  z.looseObject({ ...execBase, type: z.literal('step.failed'), error: stepError }),
  z.looseObject({ ...execBase, type: z.literal('step.skipped'), reason: z.string() }),
  z.looseObject({ ...execBase, type: z.literal('step.child_run'), child_run_id: z.string() }),
  z.looseObject({
    ...execBase,
    type: z.literal('agent.model_call'),
    turn: z.number().int(),
    usage: tokens,
    tool_calls: z.number().int(),
  }),
  z.looseObject({
    ...execBase,
    type: z.literal('agent.tool_call'),
    turn: z.number().int(),
    tool: z.string(),
    ok: z.boolean(),
    summary: z.string(),
  }),
  z.looseObject({
    ...eventBase,
    type: z.literal('run.ended'),
    status: z.enum(RUN_STATUSES),
    error: z.looseObject({ message: z.string().optional(), step_id: z.string().nullable().optional() }).nullable(),
    usage: usage.partial().optional(),
    steps: z.array(z.looseObject({ id: z.string(), status: z.string() })),
  }),
]);
export type RunEvent = z.infer<typeof runEvent>;
export const RUN_EVENT_TYPES = runEvent.options.map((o) => o.shape.type.value);

/** A hook (inbound webhook) as the API presents it; `secret` only when created or rotated. */
export const hookItem = z.looseObject({
  id: z.string(),
  workflow_id: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  signed: z.boolean(),
  enabled: z.boolean(),
  created_at: z.string(),
  secret: z.string().optional(),
});
export type HookItem = z.infer<typeof hookItem>;

/** A schedule as the CLI shows it (api/presenters/schedule.ts). */
export const scheduleItem = z.looseObject({
  id: z.string(),
  workflow_id: z.string(),
  spec: z.looseObject({
    cron: z.array(z.string()).optional(),
    interval: z.looseObject({ every_seconds: z.number() }).optional(),
    time_zone: z.string().optional(),
  }),
  overlap: z.string(),
  state: z.looseObject({ paused: z.boolean(), note: z.string().nullable() }),
  next_run_times: z.array(z.string()),
  recent_runs: z.array(z.looseObject({ run_id: z.string(), status: z.string(), scheduled_at: z.string() })),
});
export type ScheduleItem = z.infer<typeof scheduleItem>;

// --- definitions (workflows and templates as code) ---

/** A workflow as GET /api/v1/workflows/:id presents it; its steps and config pass through as written. */
export const workflowItem = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  steps: z.array(z.looseObject({ id: z.string() })),
  config: z.looseObject({}),
  updated_at: z.string().optional(),
});
export type WorkflowItem = z.infer<typeof workflowItem>;

/** A template as GET /api/v1/agents/:id presents it. */
export const templateItem = z.looseObject({
  id: z.string(),
  name: z.string(),
  system: z.boolean(),
  // Optional: `agents list` shows them; definitions as code needs none.
  step_type: z.enum(['agent', 'action']).optional(),
  action_type: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  tags: z.array(z.string()).optional(),
});
export type TemplateItem = z.infer<typeof templateItem>;
