/**
 * Integer query parameters, parsed as strictly as the OpenAPI document describes them: decimal digits only. A bare
 * `z.coerce.number()` would also take `''` (0), `0x10`, `1e1`, `+1` and ` 1`, none of which is an integer to a client
 * following the document, and would report `?wait=abc` as "expected number, got number" (NaN is a number).
 */
import { z } from 'zod';

// No sign, no leading zeros, at most 16 digits; the bounds (at most Number.MAX_SAFE_INTEGER) are checked on the number.
const DECIMAL_INTEGER = /^(0|[1-9][0-9]{0,15})$/;

/** An integer in `min`–`max`, documented as one. With `fallback`, the absent parameter reads as that value. */
export function queryInteger(bounds: { min: number; max: number; fallback?: number }) {
  const parsed = z
    .string()
    .regex(DECIMAL_INTEGER, 'must be a decimal integer')
    .transform(Number)
    .pipe(z.number().int().min(bounds.min).max(bounds.max));
  const schema = bounds.fallback === undefined ? parsed : parsed.default(bounds.fallback);
  return schema.meta({
    // The document shows what clients send, an integer in these bounds, not the string the server first reads.
    override: ({ jsonSchema }) => {
      const { description } = jsonSchema as { description?: string };
      for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
      Object.assign(jsonSchema, {
        type: 'integer',
        minimum: bounds.min,
        maximum: bounds.max,
        ...(bounds.fallback !== undefined ? { default: bounds.fallback } : {}),
        ...(description !== undefined ? { description } : {}),
      });
    },
  });
}
