/**
 * The agent loop's view of the built-in tools: every declared tool (domain/tools/declarations.ts) with its code
 * (./implementations.ts), in the order the tools endpoint lists them, and a lookup by name.
 */
import { TOOL_NAMES } from '../../domain/tools/catalog';
import { TOOL_IMPLEMENTATIONS } from './implementations';
import type { ToolDefinition } from './types';

export { TOOL_NAMES, isToolName, toolParametersSchema, type ToolName } from '../../domain/tools/catalog';

const byName: Readonly<Record<string, ToolDefinition>> = TOOL_IMPLEMENTATIONS;

/** The tool called `name`, or undefined for an unknown name (or one declared without code). */
export function getTool(name: string): ToolDefinition | undefined {
  return Object.hasOwn(byName, name) ? byName[name] : undefined;
}

/** Every tool, in the order the tools endpoint lists them. */
export const TOOLS: readonly ToolDefinition[] = TOOL_NAMES.map((name) => {
  const tool = getTool(name);
  if (!tool) throw new Error(`tool ${name} is declared but has no implementation (temporal/tools/implementations.ts)`);
  return tool;
});
