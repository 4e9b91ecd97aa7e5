/**
 * Field paths into a JSON value, as scorers name them: `$` (the value itself), `answer.city`, `$.items[0].name`,
 * `$["key with spaces"]`. Deliberately small — no wildcards, filters or recursion — so a path selects one value and
 * costs its length; anything richer is what the `jsonata` scorer is for.
 */
import type { JsonValue } from '../json';

export type FieldPath = (string | number)[];

export type ParsedPath = { ok: true; path: FieldPath } | { ok: false; message: string };

const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*/;

/** Parses `text`; a failure says what was expected and at which character (0-based). */
export function parseFieldPath(text: string): ParsedPath {
  const path: FieldPath = [];
  let i = 0;
  if (text.startsWith('$') && (text.length === 1 || text[1] === '.' || text[1] === '[')) i = 1;
  else {
    const m = NAME.exec(text);
    if (!m) return { ok: false, message: `expected a field name at 0` };
    path.push(m[0]);
    i = m[0].length;
  }
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      const m = NAME.exec(text.slice(i + 1));
      if (!m) return { ok: false, message: `expected a field name after "." at ${i + 1}` };
      path.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === '[') {
      const rest = text.slice(i + 1);
      const index = /^(\d{1,9})\]/.exec(rest);
      const quoted = /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\]/.exec(rest);
      if (index) {
        path.push(Number(index[1]));
        i += 1 + index[0].length;
      } else if (quoted) {
        path.push((quoted[1] ?? quoted[2] ?? '').replace(/\\(.)/g, '$1'));
        i += 1 + quoted[0].length;
      } else {
        return { ok: false, message: `expected an index or a quoted key and "]" after "[" at ${i + 1}` };
      }
    } else {
      return { ok: false, message: `unexpected "${c}" at ${i}` };
    }
  }
  return { ok: true, path };
}

export type Selected = { found: true; value: JsonValue } | { found: false; missing: string };

/** The value at `path` in `value`, or which step of the path found nothing. */
export function selectField(value: JsonValue, path: FieldPath): Selected {
  let current: JsonValue = value;
  let at = '$';
  for (const key of path) {
    const next = typeof key === 'number' ? `${at}[${key}]` : `${at}.${key}`;
    if (typeof key === 'number' && Array.isArray(current) && key < current.length) {
      current = current[key] as JsonValue;
    } else if (
      typeof key === 'string' &&
      current !== null &&
      typeof current === 'object' &&
      !Array.isArray(current) &&
      Object.hasOwn(current, key)
    ) {
      current = current[key] as JsonValue;
    } else {
      return { found: false, missing: next };
    }
    at = next;
  }
  return { found: true, value: current };
}

/** `path` written back as text (for reasons): `$`, `$.a[0]`. */
export function formatFieldPath(path: FieldPath): string {
  return path.reduce<string>(
    (s, k) =>
      typeof k === 'number'
        ? `${s}[${k}]`
        : NAME.test(k) && NAME.exec(k)![0] === k
          ? `${s}.${k}`
          : `${s}[${JSON.stringify(k)}]`,
    '$',
  );
}
