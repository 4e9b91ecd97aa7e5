/** `json_transform`: a JSONata expression over the given data (same engine as the `transform` action). */
import { z } from 'zod';
import { jsonValueSchema } from '../json-value';
import type { ToolDeclaration } from './types';

export const jsonTransformDeclaration = {
  name: 'json_transform' as const,
  description:
    'Query or reshape JSON data with a JSONata expression (https://jsonata.org): filter, map, sum, join. ' +
    'Returns { result } (null when nothing matches). Regex literals use RE2 syntax: no backreferences or lookarounds.',
  input: z.strictObject({
    expression: z.string().min(1).max(10_000).describe('JSONata expression, e.g. `items[price > 10].name`'),
    data: jsonValueSchema.describe('The JSON value the expression reads'),
  }),
  output: z.object({ result: jsonValueSchema }),
} satisfies ToolDeclaration;
