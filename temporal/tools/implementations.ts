/**
 * Each built-in tool's code, by name (the declarations are domain/tools/declarations.ts). A declared tool without an
 * entry here, or an entry without a declaration, is a compile error. ./registry.ts derives the lookups.
 */
import type { ToolName } from '../../domain/tools/catalog';
import { calculatorTool } from './calculator';
import { currentTimeTool } from './current-time';
import { httpFetchTool } from './http-fetch';
import { jsonTransformTool } from './json-transform';
import { sendEmailTool } from './send-email';
import type { ToolDefinition } from './types';

export const TOOL_IMPLEMENTATIONS = {
  http_fetch: httpFetchTool,
  calculator: calculatorTool,
  current_time: currentTimeTool,
  send_email: sendEmailTool,
  json_transform: jsonTransformTool,
} as const satisfies { readonly [K in ToolName]: ToolDefinition & { name: K } };
