/**
 * What the agent loop's tool activity calls: look the tool up, parse the model's arguments with the tool's schema,
 * execute. Unknown tools and bad arguments are NonRetryableError('invalid_input') — the loop may hand the message
 * back to the model instead of failing the step.
 */
import { NonRetryableError } from '../failures';
import { getTool } from './registry';
import type { ToolContext } from './types';

export async function runTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
  const tool = getTool(name);
  if (!tool) throw new NonRetryableError('invalid_input', `unknown tool "${name}"`);
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`);
    throw new NonRetryableError('invalid_input', `${name}: ${message.join('; ')}`);
  }
  return tool.execute(parsed.data, ctx);
}
