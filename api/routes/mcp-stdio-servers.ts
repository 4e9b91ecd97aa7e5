/**
 * The local stdio MCP servers the operator declared (MCP_STDIO_SERVERS, decision 0420), read-only: the names users
 * may select in `mcp_tools` as `{"stdio": "<name>"}`. The same for every user; empty when the feature is off.
 */
import Router from '@koa/router';
import { respond } from '../http/envelope';
import { presentMcpStdioServers } from '../presenters/mcp-stdio-server';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';

export function mcpStdioServerRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const servers = presentMcpStdioServers(deps.config.MCP_STDIO_SERVERS);
  router.get('/mcp-servers/stdio', ...authenticated(deps), (ctx) => respond(ctx, 200, servers));
  return router;
}
