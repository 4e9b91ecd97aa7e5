/** Shared pieces of the presenters: timestamps as ISO-8601 strings, and their schema for the OpenAPI document. */
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

/** A JSON object value (action config, JSON Schema…) as it appears in responses. */
export const jsonObjectView = z.record(z.string(), z.unknown());
