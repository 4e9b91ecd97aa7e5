/** The one root router: public health routes at the top, the versioned API under /api/v1. */
import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { healthRoutes } from './health';

export function rootRouter(deps: ApiDeps): Router {
  const root = new Router();
  const health = healthRoutes(deps);
  root.use(health.routes());
  const v1 = new Router({ prefix: '/api/v1' });
  // Resource routers are mounted here (agents, workflows, runs).
  root.use(v1.routes());
  return root;
}
