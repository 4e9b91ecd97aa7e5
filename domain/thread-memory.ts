/**
 * A thread's working memory (docs/threads.md, decision 0601): one JSON document per thread whose template sets a
 * `memory_schema`, which the user edits through the API and the agent through the built-in `update_memory` tool (a
 * JSON merge patch, RFC 7386). Pure: the merge, the first document and the tool's declaration.
 */
import type { JsonObject, JsonValue } from './json';

/** The tool a thread turn's model is given when its template has a memory schema (no registry tool has this name). */
export const UPDATE_MEMORY_TOOL = 'update_memory';

export const UPDATE_MEMORY_DESCRIPTION =
  "Changes the thread's working memory (shown in the system prompt) with a JSON merge patch: keys in `patch` " +
  'replace those in the memory, a null value removes a key, nested objects are merged. The result must fit the ' +
  "memory's JSON Schema, or nothing changes and the result says why.";

/** The tool's parameters as JSON Schema. */
export const UPDATE_MEMORY_PARAMETERS: JsonObject = {
  type: 'object',
  properties: { patch: { type: 'object', description: 'A JSON merge patch applied to the memory.' } },
  required: ['patch'],
  additionalProperties: false,
};

/** RFC 7386: `patch` merged into `target` (applying the same patch twice gives the same document). */
export function mergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base: JsonObject = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete base[key];
    else base[key] = mergePatch(base[key] ?? null, value);
  }
  return base;
}

/** A new thread's memory: the schema's top-level `default`s (an object default whole), else `{}`. */
export function initialMemory(schema: JsonObject): JsonObject {
  const d = schema.default;
  if (d !== null && typeof d === 'object' && !Array.isArray(d)) return { ...d };
  const props = schema.properties;
  const memory: JsonObject = {};
  if (props && typeof props === 'object' && !Array.isArray(props)) {
    for (const [key, p] of Object.entries(props)) {
      if (p && typeof p === 'object' && !Array.isArray(p) && 'default' in p) memory[key] = p.default!;
    }
  }
  return memory;
}
