/**
 * The one binding of action type names to code: each action the worker performs (domain/actions/declarations.ts, all
 * but those the workflow performs itself) with its implementation. A declared activity action without an entry here,
 * or an entry without a declaration, is a compile error.
 */
import { httpRequestAction } from './http-request';
import { sendEmailAction } from './send-email';
import { transformAction } from './transform';
import type { ActionDefinition, ActivityActionType } from './types';

export const ACTIONS = {
  send_email: sendEmailAction,
  http_request: httpRequestAction,
  transform: transformAction,
} as const satisfies { readonly [K in ActivityActionType]: ActionDefinition<K> };
