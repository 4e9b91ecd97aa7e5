/**
 * Validation at the edge: `validate({ body, query, params })` parses the request with zod schemas and keeps the typed
 * result for the handler, which reads it with `v.input(ctx)` — a handler never casts `ctx.request.body`.
 *
 * ```ts
 * const create = validate({ body: createTemplateBody });
 * router.post('/agents', create, async (ctx) => {
 *   const { body } = create.input(ctx); // z.output<typeof createTemplateBody>
 * });
 * ```
 * Schemas should be strict objects (`z.strictObject`): unknown fields are then a 400 naming the field. Every failure
 * is a BadRequestError whose message names each offending field (`default_prompt: required`, `tags[3]: too long`).
 */
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { BadRequestError } from '../http/errors';

/** The parts of a request that can be validated; each is optional. */
export interface InputSchemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The typed input a validator produces: one key per validated part. */
export interface ValidatedInput<S extends InputSchemas> {
  body: Out<S['body']>;
  query: Out<S['query']>;
  params: Out<S['params']>;
}

/** A Koa middleware that validates, plus the typed accessor for what it validated. */
export interface Validator<S extends InputSchemas> extends Middleware {
  /** The validated input of this request; throws if the middleware has not run (a routing bug). */
  input(ctx: Context): ValidatedInput<S>;
}

/** At most this many problems are listed in one message; the rest are counted. */
const MAX_LISTED = 5;

export function validate<S extends InputSchemas>(schemas: S): Validator<S> {
  // Per validator and per request: two validators on one route never read each other's input, and the entry
  // goes away with the request context.
  const results = new WeakMap<Context, ValidatedInput<S>>();
  // Most reads have no query string, and `{}` always parses to the same defaults: parsed once, frozen and shared.
  let emptyQuery: { value: unknown } | undefined;
  const queryOf = (ctx: Context, problems: string[]): unknown => {
    if (!schemas.query || ctx.querystring !== '') return parsePart(schemas.query, ctx.query, problems);
    if (emptyQuery) return emptyQuery.value;
    const own: string[] = [];
    const value = parsePart(schemas.query, {}, own);
    if (own.length > 0) problems.push(...own);
    else emptyQuery = { value: deepFreeze(value) };
    return value;
  };
  const middleware = async (ctx: Context, next: () => Promise<unknown>) => {
    const problems: string[] = [];
    const parsed = {
      body: parsePart(schemas.body, bodyOf(ctx), problems),
      query: queryOf(ctx, problems),
      params: parsePart(schemas.params, (ctx as Context & { params?: unknown }).params ?? {}, problems),
    };
    if (problems.length > 0) {
      const listed = problems.slice(0, MAX_LISTED);
      if (problems.length > MAX_LISTED) listed.push(`and ${problems.length - MAX_LISTED} more`);
      throw new BadRequestError(listed.join('; '), 'invalid_field');
    }
    results.set(ctx, parsed as ValidatedInput<S>);
    await next();
  };
  const input = (ctx: Context): ValidatedInput<S> => {
    const value = results.get(ctx);
    if (value === undefined) throw new Error('validate(): input() called on a route without this validator');
    return value;
  };
  return Object.assign(middleware, { input });
}

/** Freezes a parsed value and everything in it, so that a shared one cannot be changed by one request for the next. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A missing body is `{}` for POST/PATCH handlers with all-optional fields, and `undefined` is "required" otherwise. */
function bodyOf(ctx: Context): unknown {
  const body: unknown = (ctx.request as { body?: unknown }).body;
  return body === undefined ? {} : body;
}

function parsePart(schema: z.ZodType | undefined, value: unknown, problems: string[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  for (const issue of result.error.issues) problems.push(...describeIssue(issue));
  return undefined;
}

/** `a.b[3].c` from a zod path. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** Human messages that name the field; zod's own wording is kept only where it is already precise. */
export function describeIssue(issue: z.core.$ZodIssue, prefix = ''): string[] {
  const where = formatPath(issue.path, prefix);
  const at = (msg: string, field = where) => (field ? `${field}: ${msg}` : msg);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => at('unknown field', formatPath([...issue.path, key], prefix)));
    case 'invalid_type':
      if (issue.input === undefined) return [at('required')];
      return [
        at(`expected ${issue.expected === 'record' ? 'object' : issue.expected}, got ${describeValue(issue.input)}`),
      ];
    case 'too_big':
      return [at(sizeMessage('max', issue.origin, issue.maximum))];
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return [at('must not be empty')];
      return [at(sizeMessage('min', issue.origin, issue.minimum))];
    case 'invalid_value':
      return [at(`must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`)];
    case 'invalid_format':
      // A regex carries its own wording (`.regex(re, 'letters and digits only')`); formats get a generic one.
      return [at(issue.format === 'regex' ? issue.message : `must be a valid ${issue.format}`)];
    case 'invalid_union':
    case 'invalid_element':
    case 'invalid_key':
    case 'not_multiple_of':
    case 'custom':
      return [at(issue.message)];
  }
}

function sizeMessage(bound: 'max' | 'min', origin: string, limit: number | bigint): string {
  const n = String(limit);
  switch (origin) {
    case 'string':
      return bound === 'max' ? `too long (max ${n} characters)` : `too short (min ${n} characters)`;
    case 'array':
    case 'set':
      return bound === 'max' ? `too many items (max ${n})` : `too few items (min ${n})`;
    case 'object':
      return bound === 'max' ? `too many keys (max ${n})` : `too few keys (min ${n})`;
    default:
      return bound === 'max' ? `must be at most ${n}` : `must be at least ${n}`;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
