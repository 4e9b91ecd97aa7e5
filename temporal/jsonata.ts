/**
 * JSONata evaluation shared by the `transform` action and the `json_transform` tool: time- and depth-boxed, with
 * the result normalised to plain JSON. Any failure is an `expression_error` (non-retryable: it is deterministic).
 */
import jsonata from 'jsonata';
import { z } from 'zod';
import type { JsonValue } from './contract/json';
import { NonRetryableError } from './failures';

/** Any JSON value. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.json();

export interface JsonataLimits {
  /** Wall-clock budget of one evaluation (runaway recursion guard). */
  timeoutMs?: number;
  maxDepth?: number;
  signal?: AbortSignal;
}

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; position?: unknown; code?: unknown };
    const msg = typeof e.message === 'string' ? e.message : 'invalid expression';
    const pos = typeof e.position === 'number' ? ` (at ${e.position})` : '';
    return `${msg}${pos}`;
  }
  return String(err);
}

/** Parses an expression; throws NonRetryableError('expression_error') with JSONata's message and position. */
export function compileJsonata(expression: string): jsonata.Expression {
  try {
    return jsonata(expression);
  } catch (err) {
    throw new NonRetryableError('expression_error', `expression: ${describe(err)}`);
  }
}

/** Evaluates `expression` over `data`. Undefined (nothing selected) becomes null; functions are dropped. */
export async function evaluateJsonata(
  expression: string,
  data: JsonValue,
  limits: JsonataLimits = {},
): Promise<JsonValue> {
  const expr = compileJsonata(expression);
  const timeoutMs = limits.timeoutMs ?? 2000;
  const maxDepth = limits.maxDepth ?? 200;
  const started = Date.now();
  let depth = 0;
  // JSONata calls these hooks around every sub-expression: the documented way to box its time and recursion.
  const check = (): void => {
    if (depth > maxDepth) throw new NonRetryableError('expression_error', `expression: nested deeper than ${maxDepth}`);
    if (Date.now() - started > timeoutMs) {
      throw new NonRetryableError('expression_error', `expression: took longer than ${timeoutMs} ms`);
    }
    if (limits.signal?.aborted) throw new NonRetryableError('expression_error', 'expression: cancelled');
  };
  expr.assign('__evaluate_entry', () => {
    depth++;
    check();
  });
  expr.assign('__evaluate_exit', () => {
    depth--;
    check();
  });
  let result: unknown;
  try {
    result = await expr.evaluate(data);
  } catch (err) {
    if (err instanceof NonRetryableError) throw err;
    throw new NonRetryableError('expression_error', `expression: ${describe(err)}`);
  }
  if (result === undefined) return null;
  // JSONata sequences carry extra properties and may contain functions: keep only what JSON can carry.
  const json = JSON.stringify(result);
  return json === undefined ? null : (JSON.parse(json) as JsonValue);
}
