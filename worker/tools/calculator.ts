/** `calculator`: safe arithmetic through a small recursive-descent parser (./calc-parser.ts) — no eval. */
import { z } from 'zod';
import { evaluateArithmetic, MAX_EXPRESSION_CHARS } from './calc-parser';
import type { ToolDefinition } from './types';

const input = z.strictObject({
  expression: z
    .string()
    .min(1)
    .max(MAX_EXPRESSION_CHARS)
    .describe('Arithmetic: numbers, + - * / % ^ (power), parentheses, unary minus, e.g. "(2 + 3) * -4 ^ 2"'),
});

const output = z.object({ result: z.number() });

export const calculatorTool = {
  name: 'calculator' as const,
  description:
    'Evaluate an arithmetic expression exactly as written: + - * / % ^, parentheses, unary minus, decimals and ' +
    'exponents (1.5e3). Division by zero and malformed input are errors.',
  input,
  output,
  async execute(args) {
    return { result: evaluateArithmetic(args.expression) };
  },
} satisfies ToolDefinition<typeof input, typeof output>;
