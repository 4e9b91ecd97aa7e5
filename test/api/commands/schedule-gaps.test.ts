/**
 * The minimum gap of a compiled schedule spec, on calendars shaped as Temporal compiles cron strings (ranges with
 * start, end, step; no end means the start; weekday 7 is Sunday; an empty year list is every year). The API tests
 * (test/api/schedules.test.ts) run the same check on Temporal's own compilation of real cron strings.
 */
import { msToTs } from '@temporalio/common/lib/time';
import { minimumGap, tooFrequent } from '../../../api/commands/schedule-gaps';

type Cal = Parameters<typeof minimumGap>[0]['structuredCalendar'] extends (infer C)[] | null | undefined ? C : never;

const NOW = Date.parse('2026-11-27T09:00:00Z');
const every = (start: number, end: number) => [{ start, end }];
/** At h:m:s on the days the rest of the fields select (default: every day of every year). */
const at = (h: number, m: number, s = 0, days: Partial<Cal> = {}): Cal => ({
  second: [{ start: s }],
  minute: [{ start: m }],
  hour: [{ start: h }],
  dayOfMonth: every(1, 31),
  month: every(1, 12),
  dayOfWeek: every(0, 6),
  year: [],
  ...days,
});
const gap = (...calendars: Cal[]) => {
  const verdict = minimumGap({ structuredCalendar: calendars }, NOW);
  if (verdict.kind !== 'gap') throw new Error(verdict.kind);
  return verdict.seconds;
};

describe('minimumGap', () => {
  it('reads one calendar over the whole day and across midnight', () => {
    expect(gap(at(3, 0))).toBe(86_400);
    expect(gap({ ...at(0, 0), minute: [{ start: 0, end: 59, step: 15 }] })).toBe(900);
    expect(gap({ ...at(0, 0), hour: [{ start: 0, end: 23 }], minute: every(0, 59), second: every(0, 59) })).toBe(1);
    // 22:00 and 23:00 and 01:00: the night's gap is two hours, the evening's one.
    expect(gap({ ...at(0, 0), hour: [{ start: 1 }, { start: 22, end: 23 }] })).toBe(3600);
  });

  it('unites the entries of a list: within a day, across midnight, and only on days they share', () => {
    expect(gap(at(3, 0), at(3, 1))).toBe(60);
    expect(gap(at(23, 59, 30), at(0, 0, 10))).toBe(40);
    // Saturday 23:59:30 then Sunday 00:00:10 meet; Monday 23:59:30 never comes a minute before a Sunday (the
    // nearest pair is Sunday 00:00:10 and Monday 23:59:30).
    expect(gap(at(23, 59, 30, { dayOfWeek: [{ start: 6 }] }), at(0, 0, 10, { dayOfWeek: [{ start: 0 }] }))).toBe(40);
    expect(gap(at(23, 59, 30, { dayOfWeek: [{ start: 1 }] }), at(0, 0, 10, { dayOfWeek: [{ start: 0 }] }))).toBe(
      2 * 86_400 - 40,
    );
    // Mondays at 08:00 and Tuesdays at 08:01 are never a minute apart.
    expect(gap(at(8, 0, 0, { dayOfWeek: [{ start: 1 }] }), at(8, 1, 0, { dayOfWeek: [{ start: 2 }] }))).toBe(86_460);
    // The same time twice is one fire.
    expect(gap(at(3, 0), at(3, 0))).toBe(86_400);
  });

  it('finds a frequent entry however late it starts firing', () => {
    const perMinute = { ...at(0, 0), hour: every(0, 23), minute: every(0, 59) };
    expect(gap(at(3, 0), { ...perMinute, month: [{ start: 6 }] })).toBe(60);
    expect(gap(at(3, 0), { ...perMinute, dayOfMonth: [{ start: 29 }], month: [{ start: 2 }] })).toBe(60); // 2028
    expect(gap(at(3, 0), { ...perMinute, second: every(0, 59), year: [{ start: 2090, end: 2095 }] })).toBe(1);
    // Only in years gone by, or on a day that never comes: never fires.
    expect(gap(at(3, 0), { ...perMinute, year: [{ start: 2001, end: 2020 }] })).toBe(86_400);
    expect(gap(at(3, 0), { ...perMinute, dayOfMonth: [{ start: 30 }], month: [{ start: 2 }] })).toBe(86_400);
  });

  it('reads weekday 7 as Sunday', () => {
    const sunday = at(23, 59, 0, { dayOfWeek: [{ start: 7 }] });
    expect(gap(sunday, at(0, 0, 0, { dayOfWeek: [{ start: 1 }] }))).toBe(60);
    expect(gap({ ...at(3, 0), dayOfWeek: [{ start: 5, end: 7 }] })).toBe(86_400); // Fri–Sun: daily
  });

  it('takes an interval alone as its period; beside other entries it is refused', () => {
    const hour = { interval: msToTs(3_600_000) };
    expect(minimumGap({ interval: [hour] }, NOW)).toEqual({ kind: 'gap', seconds: 3600 });
    expect(minimumGap({ interval: [hour], structuredCalendar: [at(3, 0)] }, NOW)).toEqual({ kind: 'mixed_interval' });
    expect(minimumGap({ interval: [hour, hour] }, NOW)).toEqual({ kind: 'mixed_interval' });
  });
});

describe('tooFrequent', () => {
  it('names the gap and the setting, and refuses a spec Temporal left uncompiled', () => {
    expect(tooFrequent({ structuredCalendar: [at(3, 0), at(3, 1)] }, 120, NOW)).toBe(
      'spec.cron: fires 60 s apart; at least 120 s (SCHEDULE_MIN_INTERVAL_SECONDS)',
    );
    expect(tooFrequent({ structuredCalendar: [at(3, 0), at(3, 2)] }, 120, NOW)).toBeNull();
    expect(() => tooFrequent({ cronString: ['* * * * *'] }, 120, NOW)).toThrow(/uncompiled/);
  });
});
