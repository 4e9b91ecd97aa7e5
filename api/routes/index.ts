/** The one root router: public health routes and API docs at the top, the versioned API under /api/v1. */
import { METHODS } from 'node:http';
import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { CloseWatches } from '../commands/run-status/long-poll';
import { TemplateLists } from '../commands/template-lists';
import { Registry } from 'prom-client';
import { createApiMetrics, type ApiMetrics } from '../../runtime/metrics/api-metrics';
import { KeyCache } from '../middleware/key-cache';
import { createRateLimits } from '../middleware/rate-limit';
import { buildOpenApiDocument } from '../openapi';
import type { RouteDeps } from '../route-deps';
import { agentRoutes } from './agents';
import { approvalRoutes } from './approvals';
import { consoleRoutes } from './console';
import { docsRoutes } from './docs';
import { healthRoutes } from './health';
import { hookRoutes } from './hooks';
import { mcpServerRoutes } from './mcp-servers';
import { runEventRoutes } from './run-events';
import { runRoutes } from './runs';
import { scheduleRoutes } from './schedules';
import { transcriptRoutes } from './transcripts';
import { webhookRoutes } from './webhooks';
import { workflowRoutes } from './workflows';

/** `apiMetrics` is createApp's (the one its request counter uses); a router built alone counts into its own registry. */
export function rootRouter(deps: ApiDeps & { apiMetrics?: ApiMetrics }): Router {
  // Every method Node parses counts as implemented, so an unrouted one (TRACE, PROPFIND, …) on a known path is a 405
  // with the path's Allow list, as HTTP asks, rather than the router's default 501.
  const root = new Router({ methods: METHODS });
  const routeDeps: RouteDeps = {
    ...deps,
    limits: createRateLimits(deps.config, deps.db),
    apiMetrics: deps.apiMetrics ?? createApiMetrics(new Registry()),
    keys: new KeyCache(deps.db, deps.config.API_KEY_CACHE_SECONDS * 1000),
    closeWatches: new CloseWatches(deps.temporal),
    templateLists: new TemplateLists(deps.db),
  };
  const health = healthRoutes(deps);
  root.use(health.routes());
  root.use(docsRoutes(buildOpenApiDocument(deps.config)).routes());
  root.use(consoleRoutes().routes());
  const v1 = new Router({ prefix: '/api/v1' });
  v1.use(routeDeps.limits.perIp);
  // Resource routers are mounted here (agents, workflows, runs): one line each.
  v1.use(agentRoutes(routeDeps).routes());
  v1.use(transcriptRoutes(routeDeps).routes());
  v1.use(runEventRoutes(routeDeps).routes());
  v1.use(approvalRoutes(routeDeps).routes());
  v1.use(runRoutes(routeDeps).routes());
  v1.use(hookRoutes(routeDeps).routes());
  v1.use(scheduleRoutes(routeDeps).routes());
  v1.use(mcpServerRoutes(routeDeps).routes());
  v1.use(workflowRoutes(routeDeps).routes());
  v1.use(webhookRoutes(routeDeps).routes());
  root.use(v1.routes());
  return root;
}
