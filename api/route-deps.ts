/** What resource routers receive: the API's dependencies plus the per-app rate limiters. */
import type { Middleware } from 'koa';
import { requireUser } from './middleware/auth';
import type { CloseWatches } from './commands/run-status/long-poll';
import type { TemplateLists } from './commands/template-lists';
import type { KeyCache } from './middleware/key-cache';
import type { RateLimits } from './middleware/rate-limit';
import type { ApiDeps } from './deps';
import type { ApiMetrics } from '../runtime/metrics/api-metrics';

export interface RouteDeps extends ApiDeps {
  limits: RateLimits;
  apiMetrics: ApiMetrics;
  /** Checked API keys, shared by every router of the app (one cache per process). */
  keys: KeyCache;
  /** Temporal long polls for run ends that status waits may hold (bounded per process). */
  closeWatches: CloseWatches;
  /** Copies of template list pages, used while the templates' versions are unchanged (one per process). */
  templateLists: TemplateLists;
}

/**
 * Deny by default: a valid, unrevoked API key, then the per-key rate limit.
 * `router.get('/x', ...authenticated(deps), handler)` or `router.use(...authenticated(deps))`.
 */
export function authenticated(deps: RouteDeps): Middleware[] {
  return [requireUser(deps.keys), deps.limits.perKey];
}
