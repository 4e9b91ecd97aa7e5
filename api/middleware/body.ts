/**
 * JSON-only request bodies: 415 for any other media type, 413 over the limit, 400 for malformed JSON, and 400 for
 * `$`-prefixed or dotted keys (they are MongoDB operators or paths, never data a client may send) and for the key
 * `stepwise_blob` (the mark of a stored large output: no client value may look like one) anywhere — except inside
 * a JSON Schema (`output_schema`, `config.input_schema`), where `$schema`, `$defs`, `$ref`… are ordinary keywords;
 * the database layer stores schemas with escaped keys (db/schema-keys.ts), so none becomes a field name or path.
 */
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { BadRequestError, UnsupportedMediaTypeError } from '../http/errors';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function jsonBody(limitBytes: number): Middleware[] {
  const requireJson: Middleware = async (ctx, next) => {
    if (METHODS_WITH_BODY.has(ctx.method) && ctx.request.length !== 0 && hasBody(ctx.req.headers)) {
      if (!ctx.is('application/json', '+json')) throw new UnsupportedMediaTypeError();
    }
    await next();
  };
  const rejectOperatorKeys: Middleware = async (ctx, next) => {
    const body: unknown = ctx.request.body;
    const bad = findOperatorKey(body, '');
    if (bad?.endsWith('.stepwise_blob') || bad === 'stepwise_blob') {
      throw new BadRequestError(`${bad}: the key stepwise_blob is reserved`, 'invalid_key');
    }
    if (bad) throw new BadRequestError(`${bad}: keys may not start with "$" or contain "." or NUL`, 'invalid_key');
    await next();
  };
  return [requireJson, jsonParser(limitBytes), rejectOperatorKeys];
}

/** A UTF-8 JSON body parser: 413 over `limitBytes`, 400 for malformed JSON. */
export function jsonParser(limitBytes: number): Middleware {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    // Only objects and arrays at the top level; a bare string or number is malformed for every endpoint.
    jsonStrict: true,
  });
}

/**
 * 415 unless the request says `application/json` — for the protocol endpoints (/mcp, /codec), whose clients always
 * send a body; unlike `jsonBody`, a bodiless request or a `+json` type is refused too.
 */
export const requireJsonType: Middleware = async (ctx, next) => {
  if (!ctx.is('application/json')) throw new UnsupportedMediaTypeError();
  await next();
};

function hasBody(headers: Record<string, unknown>): boolean {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}

/**
 * Nesting limit of a body: deeper values would overflow the stack of recursive checks and exceed BSON's own limit
 * of 100 levels (a 500 otherwise); no endpoint needs more.
 */
export const MAX_BODY_DEPTH = 32;

/** Body paths that hold a JSON Schema (a template's, a workflow step's, a workflow's input schema). */
const SCHEMA_PATH = /^(?:output_schema|config\.input_schema|steps\[\d+\]\.output_schema)$/;

/**
 * Path of the first key that is a MongoDB operator or dotted path (or reserved), or undefined; 400 when nested too
 * deeply. Inside a schema `$` and `.` are schema syntax and allowed; NUL is refused everywhere.
 */
export function findOperatorKey(value: unknown, path: string, depth = 0, inSchema = false): string | undefined {
  if (depth > MAX_BODY_DEPTH) {
    throw new BadRequestError(`${path || 'body'}: nested too deeply (max ${MAX_BODY_DEPTH} levels)`, 'too_deep');
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findOperatorKey(value[i], `${path}[${i}]`, depth + 1, inSchema);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key.includes('\0')) return childPath;
      if (!inSchema && (key.startsWith('$') || key.includes('.') || key === 'stepwise_blob')) return childPath;
      const found = findOperatorKey(child, childPath, depth + 1, inSchema || SCHEMA_PATH.test(childPath));
      if (found) return found;
    }
  }
  return undefined;
}
