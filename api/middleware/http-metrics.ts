/**
 * Counts every request once it is answered (after the error mapping, so errors carry their status and stable code).
 * The route label is the router's pattern, never the concrete path: ids never become label values.
 */
import type { Middleware } from 'koa';
import type { ApiMetrics } from '../metrics';

/** Methods outside this set (a scanner's junk verbs) share one label value. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route pattern a request's method and path match, or undefined when no route does. */
export type RouteOf = (method: string, path: string) => string | undefined;

export function httpMetrics(metrics: ApiMetrics, routeOf?: RouteOf): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The router's pattern once it ran; for a body refused before it (415, 413, malformed JSON), the route the
      // request was sent to.
      const routerPath = (ctx as { routerPath?: unknown }).routerPath;
      const route = typeof routerPath === 'string' ? routerPath : routeOf?.(ctx.method, ctx.path);
      metrics.httpRequest(
        METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        route ?? 'unmatched',
        ctx.status,
        ctx.response.get('X-Error-Code') || 'none',
        seconds,
      );
    }
  };
}
