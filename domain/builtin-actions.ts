/**
 * The config schemas of the two actions the run workflow performs itself — `delay` (a durable timer) and `approval`
 * (a human decision) — and their run-time parse. Their declarations (domain/actions/delay.ts, approval.ts) use the
 * same schemas for the API's write-time checks and the published JSON Schema, so what the API accepts and what the
 * workflow runs cannot drift apart. Workflow-safe: zod is pure JavaScript, deterministic in the sandbox.
 */
import { z } from 'zod';

/** A run may wait at most this long in one delay step. */
export const MAX_DELAY_SECONDS = 30 * 24 * 3600;

export const delayConfig = z.strictObject({
  seconds: z.number().min(0).max(MAX_DELAY_SECONDS).optional().describe('How long to wait, in seconds (0: no wait)'),
  until: z.iso.datetime({ offset: true }).optional().describe('Wait until this instant (ISO 8601 with offset or Z)'),
});

/** Cross-field rule of `delay` (run mode only: a template may leave both open). */
export function delayRule(cfg: z.output<typeof delayConfig>, ctx: z.RefinementCtx): void {
  if ((cfg.seconds === undefined) === (cfg.until === undefined)) {
    ctx.addIssue({ code: 'custom', message: 'exactly one of seconds or until is required', path: ['seconds'] });
  }
}

export const approvalConfig = z.strictObject({
  message: z.string().min(1).max(4000).describe('What the approver is asked to decide'),
  instructions: z.string().max(16_000).optional().describe('Longer guidance shown to the approver'),
  timeout_seconds: z
    .number()
    .int()
    .positive()
    .max(30 * 24 * 3600)
    .optional()
    .describe('Fail the step when nobody decides within this time (default: wait indefinitely)'),
});

export type DelayConfig = z.output<typeof delayConfig>;
export type ApprovalConfig = z.output<typeof approvalConfig>;

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function parse<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  const field = issue?.code === 'unrecognized_keys' ? (issue.keys[0] ?? path) : path;
  return { ok: false, problem: `${field ? `${field}: ` : ''}${issue?.message ?? 'invalid'}` };
}

/** The rendered config of a delay step, checked exactly as the registry's run mode checks it. */
export function parseDelayConfig(value: unknown): Parsed<DelayConfig> {
  return parse(delayConfig.superRefine(delayRule), value);
}

export function parseApprovalConfig(value: unknown): Parsed<ApprovalConfig> {
  return parse(approvalConfig, value);
}
