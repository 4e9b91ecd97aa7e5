/**
 * Fixed words are never ids. A fixed word is a literal path segment of one route where another route, the same up to
 * that segment, has a parameter: `tools` and `actions` beside `/agents/:id`, `runs` beside `/workflows/:id…`. The
 * router matches every route against the path, so without this `/agents/tools` also matched `/agents/:id`: OPTIONS
 * listed that route's PATCH and DELETE in Allow, and a PATCH was answered as a lookup of a template called `tools`.
 *
 * The words are read from the routes themselves, so a fixed route added later reserves its word with no list to keep.
 */
import type Router from '@koa/router';

type Layer = Router['stack'][number];

const isParam = (segment: string) => segment.startsWith(':');
/** Wildcards and optional groups (`{*path}`) are neither a word nor one parameter: comparison stops there. */
const isWord = (segment: string) => segment.length > 0 && !/[:{}*()]/.test(segment);

/**
 * For each route path, the words its parameters must not take: segment index → words. Routes without any are left
 * out.
 */
export function fixedWords(paths: readonly string[]): Map<string, Map<number, Set<string>>> {
  const out = new Map<string, Map<number, Set<string>>>();
  for (const path of paths) {
    const a = path.split('/');
    for (const other of paths) {
      const b = other.split('/');
      for (let k = 0; k < Math.min(a.length, b.length); k++) {
        const ak = a[k]!;
        const bk = b[k]!;
        if (ak === bk || (isParam(ak) && isParam(bk))) continue;
        if (isParam(ak) && isWord(bk)) {
          const reserved = out.get(path) ?? new Map<number, Set<string>>();
          reserved.set(k, (reserved.get(k) ?? new Set()).add(bk));
          out.set(path, reserved);
        }
        break;
      }
    }
  }
  return out;
}

/**
 * Makes every route of `router` (routers mounted into it included: their routes are copied into its stack) refuse a
 * path whose parameter would take a fixed word. Call once, after every route is mounted.
 */
export function reserveFixedWords(router: Router): void {
  const routes = router.stack.filter(
    (layer): layer is Layer & { path: string } => layer.methods.length > 0 && typeof layer.path === 'string',
  );
  const reserved = fixedWords(routes.map((layer) => layer.path));
  for (const layer of routes) {
    const words = reserved.get(layer.path);
    if (!words) continue;
    const matches = layer.match.bind(layer);
    layer.match = (path: string) => matches(path) && !takesWord(path, words);
  }
}

function takesWord(path: string, words: Map<number, Set<string>>): boolean {
  const segments = path.split('/');
  for (const [k, set] of words) {
    const segment = segments[k];
    if (segment !== undefined && set.has(decoded(segment))) return true;
  }
  return false;
}

/** As the router decodes a parameter (`%74ools` is `tools`); a malformed escape is kept as it is. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
