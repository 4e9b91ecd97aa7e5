/**
 * User-supplied JSON Schemas (a workflow's `config.input_schema`, agent `output_schema`s), compiled so that no schema
 * can make validation super-linear: one compiler for the API's write-time checks, the run-start input check and the
 * worker's final-answer check.
 *
 * - Regular expressions (`pattern`, `patternProperties`) run on RE2 (re2js): linear time, no backtracking. Patterns
 *   RE2 cannot run (backreferences, lookaround) are refused when the schema is written.
 * - `uniqueItems` compares canonical JSON strings in a set (linear); Ajv's own pairwise comparison of untyped items is
 *   quadratic.
 * - `$ref` may only point inside the schema (`#…`); references are followed when the schema is checked and the schema
 *   expanded through them may hold at most MAX_EXPANDED_NODES subschemas, which refuses recursion (infinite expansion)
 *   and reference fan-out (exponential expansion) alike: validation then costs at most that many subschemas per value.
 * - Dialect: JSON Schema 2020-12 (`$schema` may name it, nothing else); formats use ajv-formats' `fast` expressions.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { canonicalJson, type JsonObject, type JsonValue } from './json';

/** Most subschemas a schema may expand to, `$ref`s followed (a hand-written schema has tens). */
export const MAX_EXPANDED_NODES = 2_000;
/** Longest `pattern` / `patternProperties` key. */
export const MAX_PATTERN_CHARS = 1_000;

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
/** Keywords whose value is itself a schema, a list of schemas or a map of schemas. */
const SCHEMA_VALUED = new Set([
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const UNSUPPORTED = ['$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor'];

export class UserSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserSchemaError';
  }
}

/** Ajv's `code.regExp`: every user pattern is compiled by RE2. */
function re2RegExp(pattern: string): { test(s: string): boolean; toString(): string } {
  const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  // Ajv keys its compiled patterns by toString(): it must differ per pattern.
  return { test: (s: string) => re.matcher(s).find(), toString: () => `re2:${pattern}` };
}
re2RegExp.code = 're2RegExp';

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, code: { regExp: re2RegExp } });
  addFormats(ajv, { mode: 'fast' });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    errors: false,
    validate: (unique: boolean, data: unknown[]) => {
      if (!unique) return true;
      const seen = new Set<string>();
      for (const item of data) {
        const key = canonicalJson(item);
        if (seen.has(key)) return false;
        seen.add(key);
      }
      return true;
    },
  });
  return ajv;
}

/** Every problem of `schema` that the compiler refuses (empty when it is acceptable), each naming where it is. */
export function userSchemaProblems(schema: JsonObject): string[] {
  const problems: string[] = [];
  const declared = schema.$schema;
  if (declared !== undefined && declared !== DIALECT && declared !== `${DIALECT}#`) {
    problems.push(`$schema: only JSON Schema 2020-12 is supported ("${DIALECT}")`);
  }
  const anchors = new Map<string, JsonValue>();
  collectAnchors(schema, anchors, problems, '(root)');
  if (problems.length > 0) return problems.slice(0, 5);
  let nodes = 0;
  const stack: JsonValue[] = [];
  const visit = (node: JsonValue, at: string): void => {
    if (problems.length > 0) return;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    if (stack.includes(node)) {
      problems.push(`${at}: recursive $ref (a schema may not refer to itself)`);
      return;
    }
    nodes += 1;
    if (nodes > MAX_EXPANDED_NODES) {
      problems.push(`${at}: the schema expands to more than ${MAX_EXPANDED_NODES} subschemas ($ref included)`);
      return;
    }
    stack.push(node);
    for (const keyword of UNSUPPORTED) {
      if (keyword in node) problems.push(`${at}.${keyword}: not supported`);
    }
    const ref = node.$ref;
    if (ref !== undefined) {
      const target = typeof ref === 'string' ? resolveRef(schema, anchors, ref) : undefined;
      if (target === undefined) {
        const shown = typeof ref === 'string' ? ref.slice(0, 100) : JSON.stringify(ref).slice(0, 100);
        problems.push(`${at}.$ref: "${shown}" must point inside this schema (#/… or #anchor)`);
      } else {
        visit(target, `${at}.$ref`);
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') problems.push(...patternProblems(value, `${at}.pattern`));
      if (SCHEMA_VALUED.has(key)) visit(value, `${at}.${key}`);
      else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) value.forEach((v, i) => visit(v, `${at}.${key}[${i}]`));
      else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [name, sub] of Object.entries(value)) {
          if (key === 'patternProperties') problems.push(...patternProblems(name, `${at}.patternProperties`));
          // $defs are visited through the $refs that use them; an unused definition costs nothing at validation.
          if (key !== '$defs' && key !== 'definitions') visit(sub, `${at}.${key}.${name}`);
        }
      }
    }
    stack.pop();
  };
  visit(schema, '(root)');
  return problems.slice(0, 5);
}

function patternProblems(pattern: string, at: string): string[] {
  if (pattern.length > MAX_PATTERN_CHARS) return [`${at}: a pattern is at most ${MAX_PATTERN_CHARS} characters`];
  try {
    re2RegExp(pattern);
    return [];
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 120) : 'invalid';
    return [`${at}: "${pattern.slice(0, 60)}" cannot run without backtracking (${why})`];
  }
}

/** Values that are data, not schemas: a `$id` or `$anchor` key inside them is no keyword. */
const DATA_VALUED = new Set(['const', 'enum', 'default', 'examples']);

/**
 * Collects `$anchor`s and refuses what would make this checker resolve a `$ref` elsewhere than Ajv does: Ajv scopes
 * anchors and `#/…` pointers to the nearest `$id`, this checker to the root. So a `$id` is allowed on the root only
 * and an anchor name once; otherwise a harmless twin could hide a recursive `$ref` from the expansion bound.
 */
function collectAnchors(
  node: JsonValue,
  anchors: Map<string, JsonValue>,
  problems: string[],
  at: string,
  depth = 0,
): void {
  if (depth > 64 || typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    node.forEach((item, i) => collectAnchors(item, anchors, problems, `${at}[${i}]`, depth + 1));
    return;
  }
  if (depth > 0 && '$id' in node) problems.push(`${at}.$id: only the root schema may have a $id`);
  const anchor = node.$anchor;
  if (typeof anchor === 'string') {
    if (anchors.has(anchor)) problems.push(`${at}.$anchor: "${anchor.slice(0, 60)}" is defined twice`);
    anchors.set(anchor, node);
  }
  for (const [key, value] of Object.entries(node)) {
    if (DATA_VALUED.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [name, sub] of Object.entries(value)) {
        collectAnchors(sub, anchors, problems, `${at}.${key}.${name}`, depth + 1);
      }
    } else collectAnchors(value, anchors, problems, `${at}.${key}`, depth + 1);
  }
}

/** The subschema a local `$ref` names (`#`, `#/json/pointer`, `#anchor`), or undefined. */
function resolveRef(root: JsonObject, anchors: Map<string, JsonValue>, ref: string): JsonValue | undefined {
  if (!ref.startsWith('#')) return undefined;
  const fragment = decodeURIComponent(ref.slice(1));
  if (fragment === '') return root;
  if (!fragment.startsWith('/')) return anchors.get(fragment);
  let node: JsonValue | undefined = root;
  for (const raw of fragment.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(token)) node = node[Number(token)];
    else if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else return undefined;
  }
  return node;
}

/**
 * Compiles a user schema after checking it (throws UserSchemaError naming the first problems). A fresh Ajv each time:
 * schemas may carry `$id`s, and one user's ids must never meet another's in a shared registry.
 */
export function compileUserSchema(schema: JsonObject): ValidateFunction {
  const problems = userSchemaProblems(schema);
  if (problems.length > 0) throw new UserSchemaError(problems.join('; '));
  try {
    return newAjv().compile(schema);
  } catch (err) {
    throw new UserSchemaError(err instanceof Error ? err.message.slice(0, 300) : 'does not compile');
  }
}

/** Problems as write-time messages under `field` (`config.input_schema: …`); empty when the schema is fine. */
export function describeSchemaProblems(schema: JsonObject, field: string): string[] {
  try {
    compileUserSchema(schema);
    return [];
  } catch (err) {
    return [`${field}: not a valid JSON Schema (${err instanceof Error ? err.message : 'invalid'})`];
  }
}

/** Ajv's errors for a run input as field-named problems (`input.email: required`), at most five. */
export function describeInputErrors(errors: ValidateFunction['errors']): string[] {
  return (errors ?? []).slice(0, 5).map((e) => {
    const path = e.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join('');
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty?: string }).missingProperty ?? '';
      return `input${path}.${missing}: required`;
    }
    return `input${path}: ${e.message ?? 'invalid'}`;
  });
}
