/**
 * Every action type, one declaration each, in the order GET /api/v1/agents/actions lists them. This list is the one
 * place an action type is registered: its name joins `ActionType`, the API's enums and the OpenAPI document from
 * here (./catalog.ts derives them). docs/development.md says how to add one.
 */
import { approvalDeclaration } from './approval';
import { delayDeclaration } from './delay';
import { httpRequestDeclaration } from './http-request';
import { sendEmailDeclaration } from './send-email';
import { transformDeclaration } from './transform';

export const ACTION_DECLARATIONS = [
  sendEmailDeclaration,
  httpRequestDeclaration,
  transformDeclaration,
  delayDeclaration,
  approvalDeclaration,
] as const;
