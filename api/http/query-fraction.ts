/**
 * Fractions as query parameters (a threshold between 0 and 1), parsed as the OpenAPI document describes them: a
 * number from 0 to 1 in decimal or exponent notation (`0.05`, `0.3694123523440385`, `5e-2`: what clients print for a
 * number). As with integers (query-integer.ts), a bare `z.coerce.number()` would also take `''`, ` 0.1` and `0x1`,
 * which are no numbers a client following the document sends.
 */
import { z } from 'zod';

const NUMBER = /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

/** A number from 0 to 1, documented as one; absent stays undefined (the caller's default applies). */
export function queryFraction(description: string) {
  return z
    .string()
    .regex(NUMBER, 'must be a decimal number from 0 to 1 (e.g. 0.05)')
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
