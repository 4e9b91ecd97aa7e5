/**
 * Every built-in agent tool, one declaration each, in the order GET /api/v1/agents/tools lists them. This list is the
 * one place a tool is registered: its name joins `ToolName`, the API's enums and the OpenAPI document from here
 * (./catalog.ts derives them). docs/development.md says how to add one.
 */
import { calculatorDeclaration } from './calculator';
import { currentTimeDeclaration } from './current-time';
import { httpFetchDeclaration } from './http-fetch';
import { jsonTransformDeclaration } from './json-transform';
import { sendEmailDeclaration } from './send-email';

export const TOOL_DECLARATIONS = [
  httpFetchDeclaration,
  calculatorDeclaration,
  currentTimeDeclaration,
  sendEmailDeclaration,
  jsonTransformDeclaration,
] as const;
