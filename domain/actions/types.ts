/**
 * An action type's declaration: everything the API, the database layer and the worker know of it without running it —
 * its name, description, config and output schemas, cross-field rule and effect. The worker pairs it with the code
 * that performs it (temporal/actions/types.ts). Every list, enum, JSON Schema and the OpenAPI document's `ActionType`
 * derive from the declarations in ./declarations.ts.
 */
import type { z } from 'zod';
import type { JsonObject } from '../json';

/**
 * How a step of this action is carried out:
 * - `side_effect`: one activity (heartbeats, retries), idempotency key `<run id>:<step id>`;
 * - `pure`: computes a value from earlier outputs and touches nothing outside, so the workflow runs it as a local
 *   activity (no task queue round trip);
 * - `workflow`: the workflow itself performs it (`delay`, `approval`): there is no implementation in temporal/actions.
 */
export type ActionEffect = 'side_effect' | 'pure' | 'workflow';

export interface ActionDeclaration<
  N extends string = string,
  C extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
  E extends ActionEffect = ActionEffect,
> {
  readonly name: N;
  readonly description: string;
  readonly effect: E;
  /** A strict object schema (unknown keys refused) without refinements; field rules only. */
  readonly config: C;
  /** Cross-field rules (e.g. "text or html"), run mode only, so template mode can accept partial configs. */
  // Method syntax on purpose (bivariant parameters): the catalog holds differently typed actions.
  refine?(config: z.output<C>, ctx: z.RefinementCtx): void;
  /** Shape of the step output (what `{{steps.<id>.output…}}` can reach). */
  readonly output: O;
  /** The read-only template every user sees for this action (db/system-templates.ts seeds it as `tpl_sys_<name>`). */
  readonly template: ActionTemplate;
}

/** An action's system template: what the template list shows, and the config defaults a step starts from. */
export interface ActionTemplate {
  readonly name: string;
  readonly short_description: string;
  readonly default_prompt: string;
  readonly tags: readonly string[];
  /** Checked in template mode like any template's config (`{{…}}` references allowed). */
  readonly config: JsonObject;
}
