/**
 * An action type's implementation: its declaration (domain/actions/, where its schemas and effect live) with the code
 * that performs it. Only the action types the worker performs have one (`ActivityActionType`); `delay` and `approval`
 * are carried out by the workflow itself (a durable timer, a human decision).
 */
import type { z } from 'zod';
import type { Config } from '../../config';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { Mailer } from '../mail/mailer';

import type { ActivityActionType } from '../../domain/actions/catalog';
import type { ActionDeclaration } from '../../domain/actions/types';

export { ACTION_TYPES, type ActionType } from '../../domain/action-types';
export type { ActivityActionType };

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
  N extends string = ActivityActionType,
  C extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
> extends ActionDeclaration<N, C, O, 'side_effect' | 'pure'> {
  /**
   * Performs the action with its config parsed in run mode. Throws StepError subclasses (temporal/failures.ts) on
   * failure. Method syntax on purpose (bivariant parameters): the registry holds differently typed actions.
   */
  execute(config: z.output<C>, ctx: ActionContext): Promise<z.output<O>>;
}
