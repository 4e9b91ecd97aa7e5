/**
 * The shortest gap between two fires of a schedule spec, read from the spec as Temporal compiled it (every cron
 * string becomes a structured calendar, `@every` an interval) over the whole period of its calendars — not from the
 * next few fire times, which a list can fill with a daily entry while another fires every second from June or 2030.
 *
 * The gap is nominal, on the schedule's wall clock: jitter is ignored (it delays each fire by a random amount, the
 * fires still come at the nominal rate), and so are daylight-saving transitions (ADR 0031).
 *
 * Cost: a bitmap of the day's seconds and one bit per day over at most 400 years per calendar, then one pass per
 * pair of calendars — tens of milliseconds at worst for the ten entries a spec may hold.
 */
import type { temporal } from '@temporalio/proto';

type CompiledSpec = temporal.api.schedule.v1.IScheduleSpec;
type Calendar = temporal.api.schedule.v1.IStructuredCalendarSpec;
type Range = temporal.api.schedule.v1.IRange;

const DAY = 86_400;
/** The Gregorian calendar (months, days, weekdays, leap years) repeats every 400 years. */
const CYCLE_YEARS = 400;

export type GapVerdict = { kind: 'gap'; seconds: number } | { kind: 'mixed_interval' };

/** The values a field's ranges select, as Temporal iterates them (step 0 is 1; an end before the start is the start). */
function selected(ranges: Range[] | null | undefined, max: number): Uint8Array {
  const set = new Uint8Array(max + 1);
  for (const range of ranges ?? []) {
    const start = range.start ?? 0;
    const end = Math.min(Math.max(range.end ?? 0, start), max);
    const step = range.step && range.step > 0 ? range.step : 1;
    for (let v = Math.max(start, 0); v <= end; v += step) set[v] = 1;
  }
  return set;
}

/** The seconds of the day the calendar fires at, as a bitmap over the day's 86 400 seconds. */
function timesOfDay(cal: Calendar): Uint8Array {
  const hours = selected(cal.hour, 23);
  const minutes = selected(cal.minute, 59);
  const seconds = selected(cal.second, 59);
  const out = new Uint8Array(DAY);
  for (let h = 0; h < 24; h++) {
    if (!hours[h]) continue;
    for (let m = 0; m < 60; m++) {
      if (!minutes[m]) continue;
      for (let s = 0; s < 60; s++) if (seconds[s]) out[h * 3600 + m * 60 + s] = 1;
    }
  }
  return out;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Which days from `first` (UTC midnight) on the calendar fires on, one bit per day (all fields must match). */
function fireDays(cal: Calendar, first: Date, length: number, lastYear: number): Uint32Array {
  const months = selected(cal.month, 12);
  const monthDays = selected(cal.dayOfMonth, 31);
  const weekdays = selected(cal.dayOfWeek, 7);
  if (weekdays[7]) weekdays[0] = 1; // 7 is Sunday too
  const years = cal.year && cal.year.length > 0 ? selected(cal.year, lastYear) : null; // none: every year
  const bits = new Uint32Array((length >> 5) + 2);
  let year = first.getUTCFullYear();
  let month = first.getUTCMonth() + 1;
  let day = first.getUTCDate();
  let weekday = first.getUTCDay();
  for (let i = 0; i < length; i++) {
    if ((!years || years[year]) && months[month] && monthDays[day] && weekdays[weekday]) {
      bits[i >> 5]! |= 1 << (i & 31);
    }
    weekday = (weekday + 1) % 7;
    if (++day > daysInMonth(year, month)) {
      day = 1;
      if (++month > 12) {
        month = 1;
        year++;
      }
    }
  }
  return bits;
}

/** Whether `a` fires on some day on which, `shift` (0 or 1) days later, `b` fires. */
function daysMeet(a: Uint32Array, b: Uint32Array, shift: 0 | 1): boolean {
  for (let w = 0; w + 1 < a.length; w++) {
    const later = shift === 0 ? b[w]! : (b[w]! >>> 1) | ((b[w + 1]! & 1) << 31);
    if ((a[w]! & later) !== 0) return true;
  }
  return false;
}

/** The smallest difference between two distinct seconds of the union of two times-of-day bitmaps. */
function unionGap(a: Uint8Array, b: Uint8Array): number {
  let best = Infinity;
  let prev = -1;
  for (let t = 0; t < DAY; t++) {
    if (!a[t] && !b[t]) continue; // the same second in both is one fire
    if (prev >= 0 && t - prev < best) best = t - prev;
    prev = t;
  }
  return best;
}

/**
 * The shortest gap between two fires of the calendars, in seconds: exact up to two days (fires on the same or on
 * neighbouring days); a gap only between days further apart reads as Infinity, longer than any minimum allowed.
 */
function calendarsGap(calendars: Calendar[], nowMs: number): number {
  // From the day before today in UTC: a zone ahead of UTC may already be a day further.
  const first = new Date(Math.floor(nowMs / (DAY * 1000)) * DAY * 1000 - DAY * 1000);
  const startYear = first.getUTCFullYear();
  const openEnded = calendars.some((c) => !c.year || c.year.length === 0);
  const maxYear = Math.max(
    startYear,
    ...calendars.flatMap((c) => c.year ?? []).map((r) => Math.max(r.end ?? 0, r.start ?? 0)),
  );
  const lastYear = Math.min(openEnded ? Infinity : maxYear, startYear + CYCLE_YEARS);
  const length = Math.round((Date.UTC(lastYear + 1, 0, 1) - first.getTime()) / (DAY * 1000));

  const live = calendars
    .map((cal) => {
      const times = timesOfDay(cal);
      const days = fireDays(cal, first, length, lastYear);
      return { times, firstTime: times.indexOf(1), lastTime: times.lastIndexOf(1), days };
    })
    .filter((c) => c.firstTime >= 0 && c.days.some((word) => word !== 0));
  let best = Infinity;
  for (let i = 0; i < live.length; i++) {
    const a = live[i]!;
    for (let j = 0; j < live.length; j++) {
      const b = live[j]!;
      // Two fires of one day: of one calendar, or of two that share a day.
      if (j >= i && (i === j || daysMeet(a.days, b.days, 0))) best = Math.min(best, unionGap(a.times, b.times));
      // The last fire of a day and the first of the next. Days further apart are more than a day apart, which is
      // more than SCHEDULE_MIN_INTERVAL_SECONDS can ask.
      if (daysMeet(a.days, b.days, 1)) best = Math.min(best, DAY - a.lastTime + b.firstTime);
    }
  }
  return best;
}

function durationSeconds(d: temporal.api.schedule.v1.IIntervalSpec['interval']): number {
  return Number(d?.seconds ?? 0) + (d?.nanos ?? 0) / 1e9;
}

/**
 * The shortest gap between two nominal fires of a compiled spec. An interval beside other entries is refused
 * outright: its fires are aligned to the Unix epoch (plus a phase), so they can fall any distance from the others'.
 */
export function minimumGap(spec: CompiledSpec, nowMs: number): GapVerdict {
  const intervals = spec.interval ?? [];
  const calendars = spec.structuredCalendar ?? [];
  if (intervals.length > 0 && intervals.length + calendars.length > 1) return { kind: 'mixed_interval' };
  if (intervals.length === 1) return { kind: 'gap', seconds: durationSeconds(intervals[0]!.interval) };
  return { kind: 'gap', seconds: calendarsGap(calendars, nowMs) };
}

/** SCHEDULE_MIN_INTERVAL_SECONDS for a cron spec: null when fine, else the 400's message. */
export function tooFrequent(spec: CompiledSpec, minSeconds: number, nowMs: number): string | null {
  // Temporal compiles cron strings when it stores them; one left uncompiled could not be checked.
  if ((spec.cronString ?? []).length > 0 || (spec.calendar ?? []).length > 0) {
    throw new Error('Temporal returned a schedule spec with uncompiled cron strings or calendars');
  }
  const verdict = minimumGap(spec, nowMs);
  if (verdict.kind === 'mixed_interval') {
    return 'spec.cron: an @every entry must be the only entry (its fires can fall any distance from the others’)';
  }
  if (verdict.seconds < minSeconds) {
    const shown = Math.round(verdict.seconds * 1000) / 1000;
    return `spec.cron: fires ${shown} s apart; at least ${minSeconds} s (SCHEDULE_MIN_INTERVAL_SECONDS)`;
  }
  return null;
}
