/**
 * Counts every request once it is answered (after the error mapping, so errors carry their status and stable code).
 * The route label is the router's pattern, never the concrete path: ids never become label values.
 */
import type { Middleware } from 'koa';
import type { ApiMetrics } from '../../runtime/metrics/api-metrics';

/** Methods outside this set (a scanner's junk verbs) share one label value. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function httpMetrics(metrics: ApiMetrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      metrics.httpRequest(
        METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        typeof route === 'string' ? route : 'unmatched',
        ctx.status,
        ctx.response.get('X-Error-Code') || 'none',
        seconds,
      );
    }
  };
}
