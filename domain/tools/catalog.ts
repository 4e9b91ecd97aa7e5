/**
 * The catalog of built-in agent tools: one declaration per name, in the order GET /api/v1/agents/tools lists them.
 * The worker binds the same names to code in temporal/tools/registry.ts.
 */
import { z } from 'zod';
import { calculatorDeclaration } from './calculator';
import { currentTimeDeclaration } from './current-time';
import { httpFetchDeclaration } from './http-fetch';
import { jsonTransformDeclaration } from './json-transform';
import { sendEmailDeclaration } from './send-email';
import type { ToolDeclaration } from './types';

export const TOOL_NAMES = ['http_fetch', 'calculator', 'current_time', 'send_email', 'json_transform'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const TOOL_CATALOG = {
  http_fetch: httpFetchDeclaration,
  calculator: calculatorDeclaration,
  current_time: currentTimeDeclaration,
  send_email: sendEmailDeclaration,
  json_transform: jsonTransformDeclaration,
} as const satisfies { readonly [K in ToolName]: ToolDeclaration & { name: K } };

/** Every tool's declaration, in the order the tools endpoint lists them. */
export const TOOL_DECLARATIONS: readonly ToolDeclaration[] = TOOL_NAMES.map((name) => TOOL_CATALOG[name]);

export function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && (TOOL_NAMES as readonly string[]).includes(value);
}

/**
 * The tool's parameters as JSON Schema (draft 2020-12, without `$schema`): published by GET /api/v1/agents/tools and
 * sent to the model as the function's parameters. Input view: fields with defaults are optional.
 */
export function toolParametersSchema(tool: ToolDeclaration): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
  return schema;
}
