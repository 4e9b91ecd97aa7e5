/**
 * Fractions as query parameters (a threshold between 0 and 1), parsed as strictly as the OpenAPI document describes
 * them: `0`, `1` or `0.` followed by decimal digits. As with integers (query-integer.ts), a bare `z.coerce.number()`
 * would take `''`, `1e-1` and ` 0.1`, which no client following the document sends.
 */
import { z } from 'zod';

const DECIMAL_FRACTION = /^[01](\.[0-9]{1,9})?$/;

/** A number from 0 to 1, documented as one; absent stays undefined (the caller's default applies). */
export function queryFraction(description: string) {
  return z
    .string()
    .regex(DECIMAL_FRACTION, 'must be a decimal number from 0 to 1 (e.g. 0.05)')
    .transform(Number)
    .pipe(z.number().min(0).max(1))
    .optional()
    .meta({
      // The document shows what clients send, a number in [0, 1], not the string the server first reads.
      override: ({ jsonSchema }) => {
        for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
        Object.assign(jsonSchema, { type: 'number', minimum: 0, maximum: 1, description });
      },
    });
}
