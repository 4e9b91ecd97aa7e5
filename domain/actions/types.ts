/**
 * What the API and the worker both know of an action type: its name, description, config and output schemas and
 * cross-field rule. The worker adds `execute` (temporal/actions/types.ts); the API publishes and validates these.
 */
import type { z } from 'zod';
import type { ActionType } from '../action-types';

export interface ActionDeclaration<
  N extends ActionType = ActionType,
  C extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
> {
  readonly name: N;
  readonly description: string;
  /** A strict object schema (unknown keys refused) without refinements; field rules only. */
  readonly config: C;
  /** Cross-field rules (e.g. "text or html"), run mode only, so template mode can accept partial configs. */
  // Method syntax on purpose (bivariant parameters): the catalog holds differently typed actions.
  refine?(config: z.output<C>, ctx: z.RefinementCtx): void;
  /** Shape of the step output (what `{{steps.<id>.output…}}` can reach). */
  readonly output: O;
}
