/**
 * Free-form JSON in request bodies (run input, step input, template config, JSON Schemas), with the key rules
 * api/middleware/body.ts enforces on every body stated in the schemas, so the document says them too: a data key
 * never starts with `$`, never contains `.` or NUL and is never `stepwise_blob` (MongoDB operators, paths and the
 * mark of a stored large output); inside a JSON Schema `$` and `.` are the schema's own syntax, and only NUL is
 * refused. The nesting limit (MAX_BODY_DEPTH) is in the descriptions: JSON Schema cannot bound depth.
 */
import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../domain/json';
import { MAX_BODY_DEPTH } from '../middleware/body';

/** A data key: not `$…`, no `.`, no NUL (written without lookahead, which not every JSON Schema tool reads). */
// eslint-disable-next-line no-control-regex -- NUL is the character the rule is about
export const DATA_KEY_PATTERN = /^(?:[^$.\u0000][^.\u0000]*)?$/;
/** A key inside a JSON Schema: anything but NUL. */
// eslint-disable-next-line no-control-regex -- as above
export const SCHEMA_KEY_PATTERN = /^[^\u0000]*$/;

const dataKey = z
  .string()
  .regex(DATA_KEY_PATTERN, 'keys may not start with "$" or contain "." or NUL')
  .refine((k) => k !== 'stepwise_blob', 'the key stepwise_blob is reserved')
  // The refinement above, as the document states it.
  .meta({ not: { const: 'stepwise_blob' } });
const schemaKey = z.string().regex(SCHEMA_KEY_PATTERN, 'keys may not contain NUL');

const depth = `at most ${MAX_BODY_DEPTH} levels deep`;

/** Any JSON value whose object keys are data keys. */
export const jsonData: z.ZodType<JsonValue> = z
  .lazy(() => z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonData), z.record(dataKey, jsonData)]))
  .meta({ id: 'JsonData', description: `Any JSON value; object keys are data keys (not \`$…\`, no \`.\`); ${depth}.` });

/** A JSON object whose keys, at every level, are data keys. */
export const jsonDataObject: z.ZodType<JsonObject> = z.record(dataKey, jsonData).meta({
  id: 'JsonDataObject',
  description: `A JSON object; its keys at every level are data keys (not \`$…\`, no \`.\`); ${depth}.`,
});

const schemaValue: z.ZodType<JsonValue> = z
  .lazy(() =>
    z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(schemaValue), z.record(schemaKey, schemaValue)]),
  )
  .meta({ id: 'JsonSchemaValue' });

/** A JSON Schema document (2020-12): `$schema`, `$defs`, dotted property names… are allowed; NUL in a key is not. */
export const jsonSchemaObject: z.ZodType<JsonObject> = z
  .record(schemaKey, schemaValue)
  .meta({ id: 'JsonSchemaObject', description: `A JSON Schema (2020-12) object; ${depth}.` });
