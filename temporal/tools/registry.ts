/**
 * The one binding of tool names to code (the declarations are domain/tools/declarations.ts); the agent loop reads it.
 * A declared tool without an entry here, or an entry without a declaration, is a compile error.
 */
import { TOOL_NAMES, type ToolName } from '../../domain/tools/catalog';
import { calculatorTool } from './calculator';
import { currentTimeTool } from './current-time';
import { httpFetchTool } from './http-fetch';
import { jsonTransformTool } from './json-transform';
import { sendEmailTool } from './send-email';
import type { ToolDefinition } from './types';

export { TOOL_NAMES, isToolName, toolParametersSchema, type ToolName } from '../../domain/tools/catalog';

export const TOOL_IMPLEMENTATIONS = {
  http_fetch: httpFetchTool,
  calculator: calculatorTool,
  current_time: currentTimeTool,
  send_email: sendEmailTool,
  json_transform: jsonTransformTool,
} as const satisfies { readonly [K in ToolName]: ToolDefinition & { name: K } };

const byName: Readonly<Record<string, ToolDefinition>> = TOOL_IMPLEMENTATIONS;

/** Every tool, in the order the tools endpoint lists them. */
export const TOOLS: readonly ToolDefinition[] = TOOL_NAMES.map((name) => {
  const tool = getTool(name);
  if (!tool) throw new Error(`tool ${name} is declared but has no implementation`);
  return tool;
});

/** The tool called `name`, or undefined for an unknown name. */
export function getTool(name: string): ToolDefinition | undefined {
  return Object.hasOwn(byName, name) ? byName[name] : undefined;
}
