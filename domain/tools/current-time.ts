/** `current_time`: the current instant, rendered in an IANA time zone through Intl. */
import { z } from 'zod';
import type { ToolDeclaration } from './types';

export const currentTimeDeclaration = {
  name: 'current_time' as const,
  description: 'Get the current date and time, in UTC and in a given IANA time zone (e.g. Europe/Berlin).',
  input: z.strictObject({
    time_zone: z
      .string()
      .min(1)
      .max(64)
      .default('UTC')
      .describe('IANA time zone, e.g. Europe/Paris, America/New_York (default UTC)'),
  }),
  output: z.object({
    iso: z.string().describe('UTC instant, ISO 8601'),
    time_zone: z.string(),
    local: z.string().describe('Local date and time, YYYY-MM-DDTHH:mm:ss'),
    utc_offset: z.string().describe('e.g. +02:00'),
    weekday: z.string(),
    unix_ms: z.number().int(),
  }),
} satisfies ToolDeclaration;
