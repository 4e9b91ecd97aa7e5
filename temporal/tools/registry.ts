/** The one binding of tool names to code (the declarations are domain/tools/catalog.ts); the agent loop reads it. */
import { TOOL_NAMES, isToolName, type ToolName } from '../../domain/tools/catalog';
import { calculatorTool } from './calculator';
import { currentTimeTool } from './current-time';
import { httpFetchTool } from './http-fetch';
import { jsonTransformTool } from './json-transform';
import { sendEmailTool } from './send-email';
import type { ToolDefinition } from './types';

export { TOOL_NAMES, isToolName, toolParametersSchema, type ToolName } from '../../domain/tools/catalog';

const byName = {
  http_fetch: httpFetchTool,
  calculator: calculatorTool,
  current_time: currentTimeTool,
  send_email: sendEmailTool,
  json_transform: jsonTransformTool,
} as const satisfies { readonly [K in ToolName]: ToolDefinition & { name: K } };

/** Every tool, in the order the tools endpoint lists them. */
export const TOOLS: readonly ToolDefinition[] = TOOL_NAMES.map((name) => byName[name]);

/** The tool called `name`, or undefined for an unknown name. */
export function getTool(name: string): ToolDefinition | undefined {
  return isToolName(name) ? byName[name] : undefined;
}
