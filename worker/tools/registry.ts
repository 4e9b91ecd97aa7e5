/** The one binding of tool names to code; the tools endpoint and the agent loop read this list. */
import { z } from 'zod';
import { calculatorTool } from './calculator';
import { currentTimeTool } from './current-time';
import { httpFetchTool } from './http-fetch';
import { jsonTransformTool } from './json-transform';
import { sendEmailTool } from './send-email';
import type { ToolDefinition } from './types';

export const TOOL_NAMES = ['http_fetch', 'calculator', 'current_time', 'send_email', 'json_transform'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

const byName = {
  http_fetch: httpFetchTool,
  calculator: calculatorTool,
  current_time: currentTimeTool,
  send_email: sendEmailTool,
  json_transform: jsonTransformTool,
} as const satisfies { readonly [K in ToolName]: ToolDefinition & { name: K } };

/** Every tool, in the order the tools endpoint lists them. */
export const TOOLS: readonly ToolDefinition[] = TOOL_NAMES.map((name) => byName[name]);

export function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && (TOOL_NAMES as readonly string[]).includes(value);
}

/** The tool called `name`, or undefined for an unknown name. */
export function getTool(name: string): ToolDefinition | undefined {
  return isToolName(name) ? byName[name] : undefined;
}

/**
 * The tool's parameters as JSON Schema (draft 2020-12, without `$schema`): published by GET /api/v1/agents/tools and
 * sent to the model as the function's parameters. Input view: fields with defaults are optional.
 */
export function toolParametersSchema(tool: ToolDefinition): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
  return schema;
}
