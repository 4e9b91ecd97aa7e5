/**
 * The JSON value schema shared by the `transform` action and the `json_transform` tool. Their JSONata expressions
 * are evaluated out of process by worker/expressions/evaluator.ts (never in the worker: see that file).
 */
import { z } from 'zod';
import type { JsonValue } from '../domain/json';

/** Any JSON value. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.json();
