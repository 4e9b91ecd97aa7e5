/** `calculator`: safe arithmetic through a small recursive-descent parser (temporal/tools/calc-parser.ts) — no eval. */
import { z } from 'zod';
import type { ToolDeclaration } from './types';

/** The longest expression the calculator takes. */
export const MAX_EXPRESSION_CHARS = 1000;

export const calculatorDeclaration = {
  name: 'calculator' as const,
  description:
    'Evaluate an arithmetic expression exactly as written: + - * / % ^, parentheses, unary minus, decimals and ' +
    'exponents (1.5e3). Division by zero and malformed input are errors.',
  input: z.strictObject({
    expression: z
      .string()
      .min(1)
      .max(MAX_EXPRESSION_CHARS)
      .describe('Arithmetic: numbers, + - * / % ^ (power), parentheses, unary minus, e.g. "(2 + 3) * -4 ^ 2"'),
  }),
  output: z.object({ result: z.number() }),
} satisfies ToolDeclaration;
