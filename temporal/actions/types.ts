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
import type { ActionDeclaration } from '../../domain/actions/types';

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

/** An action's declaration (domain/actions/) with the code that carries it out. */
export interface ActionDefinition<
  N extends ActionType = ActionType,
  C extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
> extends ActionDeclaration<N, C, O> {
  /** Absent for actions the workflow performs itself (delay, approval). Throws StepError subclasses on failure. */
  execute?(config: z.output<C>, ctx: ActionContext): Promise<z.output<O>>;
}
