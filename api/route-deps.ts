/** What resource routers receive: the API's dependencies plus the per-app rate limiters. */
import type { Middleware } from 'koa';
import { requireUser } from './middleware/auth';
import type { RateLimits } from './middleware/rate-limit';
import type { ApiDeps } from './deps';
import type { ApiMetrics } from '../runtime/metrics/api-metrics';

export interface RouteDeps extends ApiDeps {
  limits: RateLimits;
  apiMetrics: ApiMetrics;
}

/**
 * Deny by default: a valid, unrevoked API key, then the per-key rate limit.
 * `router.get('/x', ...authenticated(deps), handler)` or `router.use(...authenticated(deps))`.
 */
export function authenticated(deps: RouteDeps): Middleware[] {
  return [requireUser(deps.db), deps.limits.perKey];
}
