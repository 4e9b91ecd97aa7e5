/**
 * The scorers that look at the output alone (or with the expected value): exact, contains, regex, json_schema.
 * Synchronous and pure; RE2 and the user-schema compiler keep them linear in the output's size.
 */
import { canonicalJson, type JsonValue } from '../json';
import type { CompiledScorer } from './compile';
import { formatFieldPath, selectField, type FieldPath } from './field-path';
import { cannotScore, show, typeName, verdict } from './result';
import type { ScoreResult, ScoringSample } from './sample';

type Of<K extends CompiledScorer['kind']> = Extract<CompiledScorer, { kind: K }>;
type Whitespace = 'exact' | 'trim' | 'collapse';

function normalize(text: string, ignoreCase: boolean, whitespace: Whitespace): string {
  const spaced =
    whitespace === 'collapse' ? text.trim().replace(/\s+/g, ' ') : whitespace === 'trim' ? text.trim() : text;
  return ignoreCase ? spaced.toLowerCase() : spaced;
}

/** The output, or the field `path` names; a missing field is the reason the scorer fails. */
function outputAt(
  sample: ScoringSample,
  path: FieldPath | undefined,
): { ok: true; value: JsonValue } | { ok: false; why: string } {
  if (!path) return { ok: true, value: sample.output };
  const selected = selectField(sample.output, path);
  return selected.found
    ? { ok: true, value: selected.value }
    : { ok: false, why: `the output has no ${selected.missing}` };
}

/** What text-matching scorers search: a string as is, any other value as its JSON text. */
function textOf(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function scoreExact(scorer: Of<'exact'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  let expected: JsonValue;
  if (config.value !== undefined) expected = config.value;
  else if (sample.expected === undefined)
    return cannotScore(name, 'the item has no expected value and the scorer no `value`');
  else {
    const path = scorer.expectedPath ?? scorer.path;
    const selected = path ? selectField(sample.expected, path) : { found: true as const, value: sample.expected };
    if (!selected.found) return cannotScore(name, `the expected value has no ${selected.missing}`);
    expected = selected.value;
  }
  const actual = outputAt(sample, scorer.path);
  if (!actual.ok) return verdict(name, 0, false, `expected ${show(expected)}, but ${actual.why}`);
  const where = scorer.path ? ` at ${formatFieldPath(scorer.path)}` : '';
  const got = actual.value;
  if (typeof expected === 'string' && typeof got === 'string') {
    const { ignore_case: ignoreCase, whitespace } = config;
    if (normalize(got, ignoreCase, whitespace) === normalize(expected, ignoreCase, whitespace)) {
      return verdict(name, 1, true, `matches ${show(expected)}${where}`);
    }
    let hint = '';
    if (!ignoreCase && normalize(got, true, whitespace) === normalize(expected, true, whitespace)) {
      hint = ' (case-sensitive)';
    } else if (
      whitespace !== 'collapse' &&
      normalize(got, ignoreCase, 'collapse') === normalize(expected, ignoreCase, 'collapse')
    ) {
      hint = ' (whitespace differs)';
    }
    return verdict(name, 0, false, `expected ${show(expected)}, got ${show(got)}${where}${hint}`);
  }
  if (canonicalJson(got) === canonicalJson(expected))
    return verdict(name, 1, true, `matches ${show(expected)}${where}`);
  const types = typeName(got) !== typeName(expected) ? ` (${typeName(expected)} expected, ${typeName(got)} given)` : '';
  return verdict(name, 0, false, `expected ${show(expected)}, got ${show(got)}${where}${types}`);
}

export function scoreContains(scorer: Of<'contains'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  const actual = outputAt(sample, scorer.path);
  if (!actual.ok) return verdict(name, 0, false, actual.why);
  const needles = typeof config.value === 'string' ? [config.value] : config.value;
  const haystack = normalize(textOf(actual.value), config.ignore_case, config.whitespace);
  const missing = needles.filter((n) => !haystack.includes(normalize(n, config.ignore_case, config.whitespace)));
  const found = needles.length - missing.length;
  const list = (items: string[]) => items.map((n) => show(n, 40)).join(', ');
  if (config.mode === 'any') {
    if (found > 0) return verdict(name, 1, true, `contains ${list(needles.filter((n) => !missing.includes(n)))}`);
    return verdict(name, 0, false, `contains none of ${list(needles)}`);
  }
  if (missing.length === 0) return verdict(name, 1, true, `contains all ${needles.length} of ${list(needles)}`);
  return verdict(name, found / needles.length, false, `missing ${list(missing)} (${found}/${needles.length} found)`);
}

export function scoreRegex(scorer: Of<'regex'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  const actual = outputAt(sample, scorer.path);
  if (!actual.ok) return verdict(name, 0, false, actual.why);
  const text = textOf(actual.value);
  const m = scorer.regex.matcher(text);
  const matched = m.find();
  const shown = `/${config.pattern.length > 60 ? `${config.pattern.slice(0, 59)}…` : config.pattern}/`;
  const pass = matched !== config.negate;
  const reason = matched
    ? `${shown} matches ${show(m.group(0) ?? '', 40)}${config.negate ? ' (must not match)' : ''}`
    : `${shown} does not match ${show(text, 40)}${config.negate ? ' (as required)' : ''}`;
  return verdict(name, pass ? 1 : 0, pass, reason);
}

export function scoreJsonSchema(scorer: Of<'json_schema'>, sample: ScoringSample): ScoreResult {
  const { name } = scorer;
  const actual = outputAt(sample, scorer.path);
  if (!actual.ok) return verdict(name, 0, false, actual.why);
  if (scorer.validate(actual.value)) return verdict(name, 1, true, 'the output satisfies the schema');
  const base = scorer.path ? formatFieldPath(scorer.path) : '$';
  const problems = (scorer.validate.errors ?? []).slice(0, 3).map((e) => {
    const at = e.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
      .join('');
    const missing = e.keyword === 'required' ? `.${(e.params as { missingProperty?: string }).missingProperty}` : '';
    return `${base}${at}${missing}: ${e.keyword === 'required' ? 'required' : (e.message ?? 'invalid')}`;
  });
  return verdict(name, 0, false, `does not satisfy the schema: ${problems.join('; ')}`);
}
