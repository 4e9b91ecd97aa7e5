/**
 * The one binding of action type names to code: each action's declaration (domain/actions/catalog.ts) with its
 * `execute`. `ACTIONS` must hold exactly one definition per ActionType (a missing or extra key is a compile error).
 */
import type { z } from 'zod';
import { approvalAction } from './approval';
import { delayAction } from './delay';
import { httpRequestAction } from './http-request';
import { sendEmailAction } from './send-email';
import { transformAction } from './transform';
import type { ActionDefinition, ActionType } from './types';

type ActionMap = { readonly [K in ActionType]: ActionDefinition<K, z.ZodObject, z.ZodType> };

export const ACTIONS = {
  send_email: sendEmailAction,
  http_request: httpRequestAction,
  transform: transformAction,
  delay: delayAction,
  approval: approvalAction,
} as const satisfies ActionMap;
