/**
 * The root router's routes as a table of patterns and methods, read once from the router's public `stack` and
 * matched by this file's own segment matcher (the router's own matching is private API). Used where a request must
 * be related to its route before or instead of the router: the fixed-word guard and the metrics' route label.
 */
import type Router from '@koa/router';

export interface RouteEntry {
  /** The router's pattern (`/api/v1/agents/:id`): the label metrics use, never a concrete path. */
  pattern: string;
  methods: readonly string[];
  segments: readonly string[];
  /** Number of `:param` segments: the fewer, the more specific (OpenAPI's rule for overlapping paths). */
  params: number;
}

const isParam = (segment: string) => segment.startsWith(':') && !/[{}*()]/.test(segment);
const isRest = (segment: string) => /^\{\*\w+\}$/.test(segment);
const isWord = (segment: string) => !/[:{}*()]/.test(segment);

/** The routes of `router` with methods and a pattern this matcher understands (literals, `:param`, a final `{*rest}`). */
export function routeTable(router: Router): RouteEntry[] {
  const entries: RouteEntry[] = [];
  for (const layer of router.stack) {
    if (layer.methods.length === 0 || typeof layer.path !== 'string') continue;
    const segments = layer.path.split('/');
    const understood = segments.every((s, i) => isWord(s) || isParam(s) || (isRest(s) && i === segments.length - 1));
    if (!understood) continue;
    entries.push({ pattern: layer.path, methods: layer.methods, segments, params: segments.filter(isParam).length });
  }
  return entries;
}

/** Whether `path` (already split on `/`) matches the entry's pattern. */
export function matchesRoute(entry: RouteEntry, path: readonly string[]): boolean {
  const last = entry.segments.at(-1);
  const rest = last !== undefined && isRest(last);
  const fixed = rest ? entry.segments.length - 1 : entry.segments.length;
  if (rest ? path.length < fixed : path.length !== fixed) return false;
  for (let i = 0; i < fixed; i++) {
    const want = entry.segments[i]!;
    const got = path[i]!;
    if (isParam(want) ? got.length === 0 : want !== decoded(got)) return false;
  }
  return true;
}

/** The most specific route pattern a request's method and path match, or undefined when no route does. */
export function routePatternOf(routes: readonly RouteEntry[]) {
  return (method: string, path: string): string | undefined => {
    const segments = path.split('/');
    let best: RouteEntry | undefined;
    for (const entry of routes) {
      if (!entry.methods.includes(method) || !matchesRoute(entry, segments)) continue;
      if (!best || entry.params < best.params) best = entry;
    }
    return best?.pattern;
  };
}

/** As the router decodes a segment (`%74ools` is `tools`); a malformed escape is kept as it is. */
export function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
