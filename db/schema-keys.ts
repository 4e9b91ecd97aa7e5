/**
 * User JSON Schemas keep their `$schema`, `$defs`, `$ref`… keywords and may name properties with dots, but MongoDB
 * reads a `$`-prefixed field name as an operator and a dotted one as a path. So schemas are stored with their keys
 * escaped (JSON-Pointer style: `~` → `~0`, a leading `$` → `~1`, `.` → `~2`) and unescaped when read: no key of a
 * user schema ever reaches MongoDB as an operator or a path, and the API returns the schema exactly as written.
 * Schemas stored before escaping existed hold none of these characters in keys and read back unchanged.
 */
import type { JsonObject, JsonValue } from '../domain/json';

function mapKeys(value: JsonValue, key: (k: string) => string): JsonValue {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [key(k), mapKeys(v, key)]));
  }
  return value;
}

const escapeKey = (k: string): string => k.replace(/~/g, '~0').replace(/^\$/, '~1').replace(/\./g, '~2');
// One left-to-right pass: every `~` of an escaped key starts one of the three pairs, so none is read twice.
const UNESCAPED: Readonly<Record<string, string>> = { '~0': '~', '~1': '$', '~2': '.' };
const unescapeKey = (k: string): string => k.replace(/~[012]/g, (pair) => UNESCAPED[pair] ?? pair);

/** The schema as stored in MongoDB. */
export function storedSchema<T extends JsonObject | null | undefined>(schema: T): T {
  return (schema && mapKeys(schema, escapeKey)) as T;
}

/** The schema as the user wrote it, from its stored form. */
export function loadedSchema<T extends JsonObject | null | undefined>(schema: T): T {
  return (schema && mapKeys(schema, unescapeKey)) as T;
}
