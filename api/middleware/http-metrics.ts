/**
 * Counts every request once it is answered (after the error mapping, so errors carry their status and stable code).
 * The route label is the router's pattern, never the concrete path: ids never become label values.
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiMetrics } from '../../runtime/metrics/api-metrics';

/** Methods outside this set (a scanner's junk verbs) share one label value. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route pattern a request's method and path match, or undefined when no route does. */
export type RouteOf = (method: string, path: string) => string | undefined;

/**
 * The router's own choice of pattern (the most specific matching layer), for requests answered before the router ran:
 * a body the parser refused (415, 413, malformed JSON) was still sent to a route, and is counted under it.
 */
export function routePatternOf(router: Router): RouteOf {
  return (method, path) => {
    const matched = router.match(path, method);
    const pattern = matched.route ? matched.pathAndMethod.at(-1)?.path : undefined;
    // A RegExp route would give no stable label; this API declares none.
    return typeof pattern === 'string' ? pattern : undefined;
  };
}

export function httpMetrics(metrics: ApiMetrics, routeOf?: RouteOf): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const route = typeof matched === 'string' ? matched : routeOf?.(ctx.method, ctx.path);
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
