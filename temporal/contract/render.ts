/**
 * Rendering of step inputs and configs: `{{input.a.b}}` and `{{steps.<id>.output.x[0]}}` references. Pure and
 * deterministic, so the run workflow renders in workflow code and the API uses the same parser to check references
 * when a workflow is written. A reference that does not resolve is an error, never an empty string.
 */
import type { JsonObject, JsonValue } from './json';
import { isOutputRef, type OutputRef } from './run';

export type PathSegment = string | number;

export type Reference =
  | { source: 'input'; path: PathSegment[]; text: string }
  | { source: 'steps'; stepId: string; path: PathSegment[]; text: string };

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

const REF = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const SEGMENT = /^(?:\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[(?:"([^"]*)"|'([^']*)')\])/;

/** Parses the text between `{{` and `}}`. Throws RenderError with a message naming the reference. */
export function parseReference(expr: string): Reference {
  const text = `{{${expr}}}`;
  const head = /^([A-Za-z_][\w]*)/.exec(expr);
  if (!head?.[1]) throw new RenderError(`${text}: expected input.<field> or steps.<id>.output`);
  let rest = expr.slice(head[1].length);
  const path: PathSegment[] = [];
  while (rest.length > 0) {
    const m = SEGMENT.exec(rest);
    if (!m) throw new RenderError(`${text}: cannot parse "${rest}"`);
    path.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? m[3] ?? m[4] ?? ''));
    rest = rest.slice(m[0].length);
  }
  if (head[1] === 'input') return { source: 'input', path, text };
  if (head[1] === 'steps') {
    const [stepId, output, ...tail] = path;
    if (typeof stepId !== 'string' || output !== 'output') {
      throw new RenderError(`${text}: expected steps.<id>.output…`);
    }
    return { source: 'steps', stepId, path: tail, text };
  }
  throw new RenderError(`${text}: unknown source "${head[1]}" (use input or steps)`);
}

/** Every reference in a JSON value, with the location (`a.b[2]`) of the string holding it. */
export function collectReferences(value: unknown, at = ''): { at: string; ref: Reference }[] {
  const found: { at: string; ref: Reference }[] = [];
  const walk = (v: unknown, loc: string): void => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(REF)) found.push({ at: loc, ref: parseReference(m[1] ?? '') });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${loc}[${i}]`));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) walk(item, loc ? `${loc}.${k}` : k);
    }
  };
  walk(value, at);
  return found;
}

export interface RenderContext {
  input: JsonObject;
  /** Outputs of the steps completed so far, by step id. */
  steps: Record<string, JsonValue | OutputRef>;
}

/** A reference into a large output: resolved by the activity that reads the blob. */
export type DeferredRef = OutputRef & { path?: PathSegment[] };

function describe(path: PathSegment[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

function resolve(ref: Reference, ctx: RenderContext): JsonValue | DeferredRef {
  let cur: JsonValue | OutputRef;
  if (ref.source === 'input') {
    cur = ctx.input;
  } else {
    if (!Object.prototype.hasOwnProperty.call(ctx.steps, ref.stepId)) {
      throw new RenderError(`${ref.text}: step "${ref.stepId}" has no output yet`);
    }
    cur = ctx.steps[ref.stepId] as JsonValue | OutputRef;
  }
  for (let i = 0; i < ref.path.length; i++) {
    if (isOutputRef(cur)) return { ...cur, path: ref.path.slice(i) };
    const seg = ref.path[i] as PathSegment;
    const next: unknown =
      typeof seg === 'number'
        ? Array.isArray(cur)
          ? cur[seg]
          : undefined
        : cur !== null &&
            typeof cur === 'object' &&
            !Array.isArray(cur) &&
            Object.prototype.hasOwnProperty.call(cur, seg)
          ? cur[seg]
          : undefined;
    if (next === undefined) {
      throw new RenderError(`${ref.text}: ${describe(ref.path.slice(0, i + 1)) || 'value'} is missing`);
    }
    cur = next as JsonValue;
  }
  return cur;
}

/**
 * Renders every string of `value`: a string that is exactly one reference becomes the referenced value (keeping its
 * type); references inside longer text are replaced by their text (JSON for objects and arrays).
 */
export function render(value: JsonValue, ctx: RenderContext): JsonValue {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return resolve(parseReference(whole[1] ?? ''), ctx) as JsonValue;
    return value.replace(REF, (_m, expr: string) => {
      const ref = parseReference(expr);
      const v = resolve(ref, ctx);
      if (isOutputRef(v)) {
        throw new RenderError(`${ref.text}: refers to a large output; use it as a whole value, not inside text`);
      }
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => render(v, ctx));
  if (value !== null && typeof value === 'object') {
    if (isOutputRef(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, ctx)]));
  }
  return value;
}
