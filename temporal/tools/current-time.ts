/** `current_time`: the current instant, rendered in an IANA time zone through Intl. */
import type { z } from 'zod';
import { NonRetryableError } from '../failures';
import { currentTimeDeclaration as declaration } from '../../domain/tools/current-time';
import type { ToolDefinition } from './types';

function resolveZone(name: string): string {
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // ICU may answer with a legacy alias (Asia/Kolkata → Asia/Calcutta): keep the caller's name, fixing only its case.
    return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
  } catch {
    throw new NonRetryableError('invalid_input', `time_zone: unknown IANA time zone "${name}"`);
  }
}

/** Renders `at` in `timeZone`; exported for tests, which need a fixed instant. */
export function describeInstant(at: Date, timeZoneName: string): z.output<typeof declaration.output> {
  const timeZone = resolveZone(timeZoneName);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string | undefined>;
  const local = `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
  // The offset is the local wall clock read as UTC minus the instant (whole seconds: Intl has no milliseconds).
  const wallAsUtc = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offsetMin = Math.round((wallAsUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const utcOffset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return {
    iso: at.toISOString(),
    time_zone: timeZone,
    local,
    utc_offset: utcOffset,
    weekday: parts.weekday ?? '',
    unix_ms: at.getTime(),
  };
}

export const currentTimeTool = {
  ...declaration,
  async execute(args) {
    return describeInstant(new Date(), args.time_zone);
  },
} satisfies ToolDefinition<typeof declaration.input, typeof declaration.output>;
