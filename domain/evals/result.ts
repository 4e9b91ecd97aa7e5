/** How every scorer phrases its verdict: scores clamped to [0, 1], reasons short, values shown briefly. */
import type { JsonValue } from '../json';
import type { ScoreResult } from './sample';

/** Longest reason kept (a reason is a line in a table and a JUnit message, not a report). */
export const MAX_REASON_CHARS = 500;

/** A verdict; a score that is not a finite number in [0, 1] is clamped (NaN counts as 0). */
export function verdict(name: string, score: number, pass: boolean, reason: string): ScoreResult {
  const clamped = Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
  return { name, score: clamped, pass, reason: truncate(reason, MAX_REASON_CHARS) };
}

/** The scorer could not score this sample (no expected value, an evaluator failure …): score 0, not passed. */
export function cannotScore(name: string, why: string): ScoreResult {
  return verdict(name, 0, false, `cannot score: ${why}`);
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A value as a reason shows it: strings in single quotes, anything else as JSON, cut to `max` characters. */
export function show(value: JsonValue | undefined, max = 60): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return `'${truncate(value, max)}'`;
  return truncate(JSON.stringify(value), max);
}

/** "a string", "an object" … for reasons that say why two values differ. */
export function typeName(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' ? 'a number' : typeof value === 'string' ? 'a string' : 'a boolean';
}

/** A ratio as reasons print it: at most two decimals. */
export function fmt(n: number): string {
  return String(Math.round(n * 100) / 100);
}
