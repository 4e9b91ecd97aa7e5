/**
 * An action type (`step_type: action`). Every action has a config schema (validated on template/workflow write,
 * partially, and fully at run time once `{{…}}` references are rendered). Actions with side effects run as one
 * activity (`execute`); `delay` and `approval` are carried out by the workflow itself (a durable timer, a signal).
 */
import type { z } from 'zod';
import type { Config } from '../../config';
import type { Mailer } from '../mail/mailer';

export const ACTION_TYPES = ['send_email', 'http_request', 'transform', 'delay', 'approval'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export interface ActionContext {
  config: Config;
  mailer: Mailer;
  runId: string;
  stepId: string;
  /** `<run id>:<step id>`: the same on every retry of the step, so a retried side effect is recognisable. */
  idempotencyKey: string;
  signal?: AbortSignal;
  /** Call during long operations so Temporal sees the activity alive and can deliver a cancellation. */
  heartbeat(): void;
}

export interface ActionDefinition<S extends z.ZodType = z.ZodType, O = unknown> {
  readonly name: ActionType;
  readonly description: string;
  readonly config: S;
  /** Absent for actions the workflow performs itself (delay, approval). */
  execute?(config: z.output<S>, ctx: ActionContext): Promise<O>;
}
