/** The one root router: public health routes and API docs at the top, the versioned API under /api/v1. */
import { METHODS } from 'node:http';
import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { buildOpenApiDocument } from '../openapi/document';
import { mcpRoutes } from '../mcp/route';
import { agentRoutes } from './agents';
import { approvalRoutes } from './approvals';
import { datasetRoutes } from './datasets';
import { experimentRoutes } from './experiments';
import { consoleRoutes } from './console';
import { docsRoutes } from './docs';
import { healthRoutes } from './health';
import { hookRoutes } from './hooks';
import { mcpServerRoutes } from './mcp-servers';
import { mcpStdioServerRoutes } from './mcp-stdio-servers';
import { runEventRoutes } from './run-events';
import { runRoutes } from './runs';
import { scheduleRoutes } from './schedules';
import { threadRoutes } from './threads';
import { transcriptRoutes } from './transcripts';
import { usageRoutes } from './usage';
import { webhookRoutes } from './webhooks';
import { workflowRoutes } from './workflows';

/** Mounts every router on the composed process (api/compose.ts); builds no cache, limiter or client of its own. */
export function rootRouter(deps: ApiDeps): Router {
  // Every method Node parses counts as implemented, so an unrouted one (TRACE, PROPFIND, …) on a known path is a 405
  // with the path's Allow list, as HTTP asks, rather than the router's default 501.
  const root = new Router({ methods: METHODS });
  const health = healthRoutes(deps);
  root.use(health.routes());
  root.use(docsRoutes(buildOpenApiDocument(deps.config)).routes());
  root.use(consoleRoutes().routes());
  // Stepwise as an MCP server (api/mcp/): JSON-RPC, authenticated like /api/v1.
  root.use(mcpRoutes(deps).routes());
  const v1 = new Router({ prefix: '/api/v1' });
  v1.use(deps.limits.perIp);
  // Resource routers are mounted here (agents, workflows, runs): one line each.
  v1.use(agentRoutes(deps).routes());
  v1.use(transcriptRoutes(deps).routes());
  v1.use(runEventRoutes(deps).routes());
  v1.use(approvalRoutes(deps).routes());
  v1.use(runRoutes(deps).routes());
  v1.use(hookRoutes(deps).routes());
  v1.use(scheduleRoutes(deps).routes());
  v1.use(workflowRoutes(deps).routes());
  v1.use(webhookRoutes(deps).routes());
  v1.use(threadRoutes(deps).routes());
  v1.use(mcpStdioServerRoutes(deps).routes());
  v1.use(mcpServerRoutes(deps).routes());
  v1.use(usageRoutes(deps).routes());
  v1.use(datasetRoutes(deps).routes());
  v1.use(experimentRoutes(deps).routes());
  root.use(v1.routes());
  return root;
}
