/** Timestamps as every response (and webhook body) carries them: ISO-8601 UTC strings, and their schema. */
import { z } from 'zod';

/** An ISO-8601 UTC timestamp as every response carries it. */
export const isoTimestamp = z.iso
  .datetime()
  .meta({ description: 'ISO-8601 UTC timestamp', example: '2026-01-31T12:00:00.000Z' });

export function iso(date: Date): string {
  return date.toISOString();
}

export function isoOrNull(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}
