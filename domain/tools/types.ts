/**
 * What the API and the worker both know of an agent tool: its name, description and input and output schemas (the
 * input schema is the source of truth for the JSON Schema published at GET /api/v1/agents/tools and sent to the
 * model). The worker adds `execute` (temporal/tools/types.ts).
 */
import type { z } from 'zod';

export interface ToolDeclaration<S extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  /** A strict object schema: the tool's parameters. */
  readonly input: S;
  readonly output: O;
}
