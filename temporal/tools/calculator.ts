/** `calculator`: safe arithmetic through a small recursive-descent parser (./calc-parser.ts) — no eval. */
import { evaluateArithmetic } from './calc-parser';
import { calculatorDeclaration as declaration } from '../../domain/tools/calculator';
import type { ToolDefinition } from './types';

export const calculatorTool = {
  ...declaration,
  async execute(args) {
    return { result: evaluateArithmetic(args.expression) };
  },
} satisfies ToolDefinition<typeof declaration.input, typeof declaration.output>;
