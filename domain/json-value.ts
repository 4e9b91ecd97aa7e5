/** Any JSON value as a zod schema, shared by the action and tool schemas (the types are in ./json.ts). */
import { z } from 'zod';
import type { JsonValue } from './json';

/** Any JSON value. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.json();
