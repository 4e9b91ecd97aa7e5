/** `json_transform`: a JSONata expression over the given data (same engine as the `transform` action). */
import { z } from 'zod';
import { jsonValueSchema } from '../../domain/json-value';
import type { ToolDefinition } from './types';

const input = z.strictObject({
  expression: z.string().min(1).max(10_000).describe('JSONata expression, e.g. `items[price > 10].name`'),
  data: jsonValueSchema.describe('The JSON value the expression reads'),
});

const output = z.object({ result: jsonValueSchema });

export const jsonTransformTool = {
  name: 'json_transform' as const,
  description:
    'Query or reshape JSON data with a JSONata expression (https://jsonata.org): filter, map, sum, join. ' +
    'Returns { result } (null when nothing matches). Regex literals use RE2 syntax: no backreferences or lookarounds.',
  input,
  output,
  async execute(args, ctx) {
    return { result: await ctx.expressions.evaluate(args.expression, args.data) };
  },
} satisfies ToolDefinition<typeof input, typeof output>;
