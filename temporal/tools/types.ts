/**
 * An agent tool: one typed object in (its zod schema is the source of truth for the JSON Schema published at
 * GET /api/v1/agents/tools and sent to the model), one JSON-serialisable object out (described by `output`).
 */
import type { z } from 'zod';
import type { Config } from '../../config';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { EgressPolicy } from '../../domain/egress';
import type { Mailer } from '../mail/mailer';
import type { ToolDeclaration } from '../../domain/tools/types';

/** What a tool may use: passed in, never imported as a singleton. */
export interface ToolContext {
  config: Config;
  mailer: Mailer;
  /** JSONata, evaluated out of process under time and memory limits. */
  expressions: ExpressionEvaluator;
  /** Idempotency scope of the call: `<run id>:<step id>:<call id>` during a run, a random id in tests. */
  idempotencyKey: string;
  /** Where the step's e-mail and HTTP may go; tools check it before any side effect. */
  egress: EgressPolicy;
  signal?: AbortSignal;
}

export interface ToolDefinition<
  S extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> extends ToolDeclaration<S, O> {
  // Method syntax on purpose: a registry of different tools is a ToolDefinition[] (parameters are bivariant).
  /** Throws StepError subclasses (temporal/failures.ts) on failure; `toApplicationFailure` classifies the rest. */
  execute(input: z.output<S>, ctx: ToolContext): Promise<z.output<O>>;
}
