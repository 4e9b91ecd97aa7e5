/** `transform`: a JSONata expression evaluated over `data` — pure data shaping of earlier outputs. */
import { z } from 'zod';
import { jsonValueSchema } from '../json-value';
import type { ActionDeclaration } from './types';

const config = z.strictObject({
  expression: z.string().min(1).max(10_000).describe('JSONata expression, e.g. `{"total": $sum(items.price)}`'),
  data: jsonValueSchema.optional().describe('The value the expression reads (usually `{{steps.<id>.output}}`)'),
});

/** The step output is the expression's result itself (null when it selects nothing). */
const output = jsonValueSchema;

export const transformDeclaration = {
  name: 'transform',
  effect: 'pure',
  description:
    'Reshape data with a JSONata expression (https://jsonata.org), e.g. pick fields of an earlier step output. ' +
    'Pure: no I/O; a bad expression fails the step without retries. Regex literals use RE2 syntax (no ' +
    'backreferences or lookarounds); time, memory and size are limited (see EXPRESSION_* settings).',
  config,
  output,
  template: {
    name: 'Transform data',
    short_description: 'Reshapes earlier outputs with a JSONata expression.',
    default_prompt: 'Reshape data with a JSONata expression; set data to a reference such as {{steps.<id>.output}}.',
    tags: ['data'],
    config: { expression: '$' },
  },
} satisfies ActionDeclaration<'transform', typeof config, typeof output>;
