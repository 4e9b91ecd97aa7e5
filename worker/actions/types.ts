/**
 * An action type (`step_type: action`). Every action has a config schema (validated on template/workflow write,
 * partially, and fully at run time once `{{…}}` references are rendered) and an output schema. Actions with side
 * effects run as one activity (`execute`); `delay` and `approval` are carried out by the workflow itself (a durable
 * timer, a human decision), so they have no `execute`.
 *
 * The names live in domain/action-types.ts (the database layer and the run snapshot need them too).
 */
import type { z } from 'zod';
import type { Config } from '../../config';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { Mailer } from '../mail/mailer';

import type { ActionType } from '../../domain/action-types';

export { ACTION_TYPES, type ActionType } from '../../domain/action-types';

export interface ActionContext {
  config: Config;
  mailer: Mailer;
  /** JSONata, evaluated out of process under time and memory limits. */
  expressions: ExpressionEvaluator;
  runId: string;
  stepId: string;
  /** `<run id>:<step id>`: the same on every retry of the step, so a retried side effect is recognisable. */
  idempotencyKey: string;
  signal?: AbortSignal;
  /** Call during long operations so Temporal sees the activity alive and can deliver a cancellation. */
  heartbeat(): void;
}

export interface ActionDefinition<
  N extends ActionType = ActionType,
  C extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
> {
  readonly name: N;
  readonly description: string;
  /** A strict object schema (unknown keys refused) without refinements; field rules only. */
  readonly config: C;
  /** Cross-field rules (e.g. "text or html"), run mode only, so template mode can accept partial configs. */
  // Method syntax on purpose (bivariant parameters), like execute: the registry holds differently typed actions.
  refine?(config: z.output<C>, ctx: z.RefinementCtx): void;
  /** Shape of the step output (what `{{steps.<id>.output…}}` can reach). */
  readonly output: O;
  /** Absent for actions the workflow performs itself (delay, approval). Throws StepError subclasses on failure. */
  execute?(config: z.output<C>, ctx: ActionContext): Promise<z.output<O>>;
}
