/**
 * Fixed words are never ids. A fixed word is a literal path segment of one route where another route, the same up to
 * that segment, has a parameter: `tools` and `actions` beside `/agents/:id`, `runs` beside `/workflows/:id…`. The
 * router runs every route whose pattern matches the path, so without this guard `/agents/tools` also matched
 * `/agents/:id`: OPTIONS listed that route's PATCH and DELETE in Allow, and a PATCH was answered as a lookup of a
 * template called `tools`.
 *
 * The words are read from the routes themselves, so a fixed route added later reserves its word with no list to keep.
 * The guard runs before the router and only acts on a path where some route's parameter would take a fixed word.
 */
import type { Middleware } from 'koa';
import { decoded, matchesRoute, type RouteEntry } from './route-table';

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
 * Answers a request whose path only some route's parameter would take as a fixed word: with the methods of the
 * routes left (405 with their Allow, or OPTIONS' list), or as an unknown route when none is left. Every other request
 * goes on to the router unchanged. The answers are left bodiless, as the router's allowedMethods() leaves them: the
 * error middleware puts them in the envelope.
 */
export function fixedWordGuard(routes: readonly RouteEntry[]): Middleware {
  const reserved = fixedWords(routes.map((r) => r.pattern));
  return async (ctx, next) => {
    const path = ctx.path.split('/');
    const matching = routes.filter((r) => matchesRoute(r, path));
    const kept = matching.filter((r) => !takesWord(path, reserved.get(r.pattern)));
    const allow = [...new Set(kept.flatMap((r) => r.methods))];
    if (kept.length === matching.length || allow.includes(ctx.method)) {
      await next();
      return;
    }
    if (allow.length === 0) {
      ctx.status = 404;
      return;
    }
    ctx.set('Allow', allow.join(', '));
    ctx.status = ctx.method === 'OPTIONS' ? 200 : 405;
  };
}

function takesWord(path: readonly string[], words: Map<number, Set<string>> | undefined): boolean {
  if (!words) return false;
  for (const [k, set] of words) {
    const segment = path[k];
    if (segment !== undefined && set.has(decoded(segment))) return true;
  }
  return false;
}
