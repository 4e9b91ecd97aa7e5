/** `json_transform`: a JSONata expression over the given data (same engine as the `transform` action). */
import { jsonTransformDeclaration as declaration } from '../../domain/tools/json-transform';
import type { ToolDefinition } from './types';

export const jsonTransformTool = {
  ...declaration,
  async execute(args, ctx) {
    return { result: await ctx.expressions.evaluate(args.expression, args.data) };
  },
} satisfies ToolDefinition<typeof declaration.input, typeof declaration.output>;
