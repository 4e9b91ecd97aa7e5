/**
 * An agent tool: one typed object in (its zod schema is the source of truth for the JSON Schema published at
 * GET /api/v1/agents/tools and sent to the model), one JSON-serialisable object out.
 */
import type { z } from 'zod';
import type { Config } from '../../config';
import type { Mailer } from '../mail/mailer';

/** What a tool may use: passed in, never imported as a singleton. */
export interface ToolContext {
  config: Config;
  mailer: Mailer;
  /** Idempotency scope of the call: `<run id>:<step id>:<call id>` during a run, a random id in tests. */
  idempotencyKey: string;
  signal?: AbortSignal;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType, O = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  // Method syntax on purpose: a registry of different tools is a ToolDefinition[] (parameters are bivariant).
  execute(input: z.output<S>, ctx: ToolContext): Promise<O>;
}
