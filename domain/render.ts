/**
 * Rendering of step inputs and configs: `{{input.a.b}}` and `{{steps.<id>.output.x[0]}}` references. Pure and
 * deterministic, so the run workflow renders in workflow code and the API uses the same parser to check references
 * when a workflow is written. A reference that does not resolve is an error, never an empty string.
 */
import type { JsonObject, JsonValue } from './json';
import { scanReferences, wholeReference } from './reference-scan';
import { isOutputRef, type OutputRef, type StepStatus } from './run';

export type PathSegment = string | number;

export type Reference =
  | { source: 'input'; path: PathSegment[]; text: string }
  | { source: 'steps'; stepId: string; path: PathSegment[]; text: string }
  /** `steps.<id>.status`: how the step ended (`completed`, `failed`, `skipped`). */
  | { source: 'step_status'; stepId: string; text: string }
  /** `map.item…` (the current item of a map step) and `map.index` (its 0-based index). */
  | { source: 'map'; field: 'item' | 'index'; path: PathSegment[]; text: string }
  /** `loop.iteration` (1-based) and `loop.previous…` (the previous iteration's output, null on the first). */
  | { source: 'loop'; field: 'iteration' | 'previous'; path: PathSegment[]; text: string };

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

/** Longest text between `{{` and `}}`: a reference names a path, not a document. */
export const MAX_REFERENCE_CHARS = 1024;
/** Most segments in a reference's path (JSON values nest at most this deep here anyway). */
export const MAX_REFERENCE_SEGMENTS = 64;
/** Longest string rendering may build by interpolation (references inside text can repeat a large value). */
export const MAX_RENDERED_STRING_CHARS = 256 * 1024;

// Sticky (`y`) and anchored at lastIndex: each segment is matched where the previous one ended, so a long path costs
// linear time (slicing the rest of the string per segment was quadratic). No nested quantifiers: no backtracking.
const HEAD = /[A-Za-z_]\w*/y;
const SEGMENT = /\.([A-Za-z_][\w-]*)|\[(\d{1,9})\]|\[(?:"([^"]*)"|'([^']*)')\]/y;

function excerpt(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Parses the text between `{{` and `}}`. Throws RenderError with a message naming the reference. */
export function parseReference(expr: string): Reference {
  if (expr.length > MAX_REFERENCE_CHARS) {
    throw new RenderError(`{{${excerpt(expr)}}}: a reference is at most ${MAX_REFERENCE_CHARS} characters`);
  }
  const text = `{{${expr}}}`;
  HEAD.lastIndex = 0;
  const head = HEAD.exec(expr);
  if (!head) throw new RenderError(`${text}: expected input.<field> or steps.<id>.output`);
  let at = HEAD.lastIndex;
  const path: PathSegment[] = [];
  while (at < expr.length) {
    SEGMENT.lastIndex = at;
    const m = SEGMENT.exec(expr);
    if (!m) throw new RenderError(`${text}: cannot parse "${excerpt(expr.slice(at))}"`);
    if (path.length >= MAX_REFERENCE_SEGMENTS) {
      throw new RenderError(`${excerpt(text)}: a reference has at most ${MAX_REFERENCE_SEGMENTS} path segments`);
    }
    path.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? m[3] ?? m[4] ?? ''));
    at = SEGMENT.lastIndex;
  }
  const [first, ...rest] = path;
  switch (head[0]) {
    case 'input':
      return { source: 'input', path, text };
    case 'steps': {
      const [field, ...tail] = rest;
      if (typeof first === 'string' && field === 'output') return { source: 'steps', stepId: first, path: tail, text };
      if (typeof first === 'string' && field === 'status' && tail.length === 0) {
        return { source: 'step_status', stepId: first, text };
      }
      throw new RenderError(`${text}: expected steps.<id>.output… or steps.<id>.status`);
    }
    case 'map':
      if (first === 'item') return { source: 'map', field: 'item', path: rest, text };
      if (first === 'index' && rest.length === 0) return { source: 'map', field: 'index', path: [], text };
      throw new RenderError(`${text}: expected map.item… or map.index`);
    case 'loop':
      if (first === 'previous') return { source: 'loop', field: 'previous', path: rest, text };
      if (first === 'iteration' && rest.length === 0) return { source: 'loop', field: 'iteration', path: [], text };
      throw new RenderError(`${text}: expected loop.iteration or loop.previous…`);
  }
  throw new RenderError(`${excerpt(text)}: unknown source "${excerpt(head[0])}" (use input, steps, map or loop)`);
}

/** Every reference in a JSON value, with the location (`a.b[2]`) of the string holding it. */
export function collectReferences(value: unknown, at = ''): { at: string; ref: Reference }[] {
  const found: { at: string; ref: Reference }[] = [];
  const walk = (v: unknown, loc: string): void => {
    if (typeof v === 'string') {
      for (const m of scanReferences(v)) found.push({ at: loc, ref: parseReference(m.expr) });
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
  /** Outputs of the steps finished so far, by step id (null for skipped steps). */
  steps: Record<string, JsonValue | OutputRef>;
  /** How the finished steps ended (`{{steps.<id>.status}}`). */
  statuses?: Record<string, StepStatus>;
  /** Inside a map step: the current item and its index. */
  map?: { item: JsonValue; index: number };
  /** Inside a loop step: the iteration (1-based) and the previous iteration's output. */
  loop?: { iteration: number; previous: JsonValue | OutputRef | null };
}

/** A reference into a large output: resolved by the activity that reads the blob. */
export type DeferredRef = OutputRef & { path?: PathSegment[] };

function describe(path: PathSegment[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

/** The value a reference starts from, before its path: a stored reference (large output) passes through whole. */
function startOf(ref: Reference, ctx: RenderContext): JsonValue | OutputRef {
  switch (ref.source) {
    case 'input':
      return ctx.input;
    case 'steps':
      if (!Object.prototype.hasOwnProperty.call(ctx.steps, ref.stepId)) {
        throw new RenderError(`${ref.text}: step "${ref.stepId}" has no output yet`);
      }
      return ctx.steps[ref.stepId] as JsonValue | OutputRef;
    case 'step_status': {
      const status = ctx.statuses?.[ref.stepId];
      if (status === undefined) throw new RenderError(`${ref.text}: step "${ref.stepId}" has not finished yet`);
      return status;
    }
    case 'map':
      if (!ctx.map) throw new RenderError(`${ref.text}: only inside a map step`);
      return ref.field === 'item' ? ctx.map.item : ctx.map.index;
    case 'loop':
      if (!ctx.loop) throw new RenderError(`${ref.text}: only inside a loop step`);
      return ref.field === 'iteration' ? ctx.loop.iteration : ctx.loop.previous;
  }
}

function pathOf(ref: Reference): PathSegment[] {
  return ref.source === 'step_status' ? [] : ref.path;
}

function resolve(ref: Reference, ctx: RenderContext): JsonValue | DeferredRef {
  const start = startOf(ref, ctx);
  const path = pathOf(ref);
  // Only a whole output can be a stored reference (storeOutput makes nothing else): a reference-like object inside a
  // value is data and is walked like any other. A map item taken from a stored list is a reference with a path.
  if (isOutputRef(start)) {
    const base = (start as DeferredRef).path ?? [];
    return path.length > 0 || base.length > 0 ? { ...start, path: [...base, ...path] } : start;
  }
  let cur: JsonValue = start;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as PathSegment;
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
      throw new RenderError(`${ref.text}: ${describe(path.slice(0, i + 1)) || 'value'} is missing`);
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
    const whole = wholeReference(value);
    if (whole) return resolve(parseReference(whole.expr), ctx) as JsonValue;
    const matches = scanReferences(value);
    if (matches.length === 0) return value;
    const parts: string[] = [];
    let length = 0;
    let from = 0;
    for (const m of matches) {
      const ref = parseReference(m.expr);
      const v = resolve(ref, ctx);
      if (isOutputRef(v)) {
        throw new RenderError(`${ref.text}: refers to a large output; use it as a whole value, not inside text`);
      }
      const piece = typeof v === 'string' ? v : JSON.stringify(v);
      length += m.start - from + piece.length;
      if (length > MAX_RENDERED_STRING_CHARS) {
        throw new RenderError(`${ref.text}: the rendered text would exceed ${MAX_RENDERED_STRING_CHARS} characters`);
      }
      parts.push(value.slice(from, m.start), piece);
      from = m.end;
    }
    parts.push(value.slice(from));
    return parts.join('');
  }
  if (Array.isArray(value)) return value.map((v) => render(v, ctx));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, ctx)]));
  }
  return value;
}
