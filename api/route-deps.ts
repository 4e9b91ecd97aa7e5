/** What resource routers receive, and the authentication every protected route starts with. */
import type { Middleware } from 'koa';
import { requireUser } from './middleware/auth';
import type { ApiDeps } from './deps';

/** The composed API process (api/compose.ts): routers use what is in it and build nothing of their own. */
export type RouteDeps = ApiDeps;

/**
 * Deny by default: a valid, unrevoked API key, then the per-key rate limit.
 * `router.get('/x', ...authenticated(deps), handler)` or `router.use(...authenticated(deps))`.
 */
export function authenticated(deps: RouteDeps): Middleware[] {
  return [requireUser(deps.keys), deps.limits.perKey];
}
