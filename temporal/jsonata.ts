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
  /** Wall-clock budget of one evaluation (guards against runaway recursion). */
  timeoutMs?: number;
  /** Maximum evaluation depth. */
  maxDepth?: number;
  /** Maximum length of any sequence built during evaluation (guards against memory blow-ups like `[1..1e9]`). */
  maxSequence?: number;
}

const ERROR_HINTS: Readonly<Record<string, string>> = {
  D1011: 'nested too deeply',
  D1012: 'took too long',
};

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; position?: unknown; code?: unknown };
    const hint = typeof e.code === 'string' ? ERROR_HINTS[e.code] : undefined;
    const msg = hint ?? (typeof e.message === 'string' ? e.message : 'invalid expression');
    const pos = typeof e.position === 'number' ? ` (at ${e.position})` : '';
    return `${msg}${pos}`;
  }
  return String(err);
}

/** JSONata functions are objects flagged like this; they have no JSON form (and may be circular). */
function isJsonataFunction(value: unknown): boolean {
  if (typeof value === 'function') return true;
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { _jsonata_lambda?: unknown; _jsonata_function?: unknown };
  return v._jsonata_lambda === true || v._jsonata_function === true;
}

/** Evaluates `expression` over `data`. Undefined (nothing selected) becomes null; functions are dropped. */
export async function evaluateJsonata(
  expression: string,
  data: JsonValue,
  limits: JsonataLimits = {},
): Promise<JsonValue> {
  let expr: jsonata.Expression;
  try {
    expr = jsonata(expression, {
      timeout: limits.timeoutMs ?? 2000,
      stack: limits.maxDepth ?? 300,
      sequence: limits.maxSequence ?? 100_000,
    });
  } catch (err) {
    throw new NonRetryableError('expression_error', `expression: ${describe(err)}`);
  }
  try {
    const result: unknown = await expr.evaluate(data);
    if (result === undefined) return null;
    // JSONata sequences carry extra properties and may contain functions: keep only what JSON can carry.
    const json = JSON.stringify(result, (_key, value: unknown) => (isJsonataFunction(value) ? undefined : value));
    return json === undefined ? null : (JSON.parse(json) as JsonValue);
  } catch (err) {
    throw new NonRetryableError('expression_error', `expression: ${describe(err)}`);
  }
}
