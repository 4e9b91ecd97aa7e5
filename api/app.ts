/**
 * Builds the Koa application from the composed process (api/compose.ts) and never listens: server.ts does, tests
 * mount app.callback().
 * Order matters: request context → security headers → envelope/error mapping → codec endpoint (its own CORS and
 * body limit) → CORS → JSON body → the fixed-word guard → routes.
 */
import Koa, { type Middleware } from 'koa';
import './http/state';
import type { ApiDeps } from './deps';
import { jsonBody } from './middleware/body';
import { errorMiddleware } from './middleware/errors';
import { httpMetrics } from './middleware/http-metrics';
import { requestSpan } from './middleware/request-span';
import { requestContext } from './middleware/request-context';
import { corsPolicy, securityHeaders } from './middleware/security-headers';
import { MCP_PATH } from './mcp/route';
import { rootRouter } from './routes';
import { codecRoutes } from './routes/codec';
import { fixedWordGuard } from './routes/fixed-words';
import { routePatternOf, routeTable } from './routes/route-table';

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  // Errors are answered by errorMiddleware; Koa's default handler would only print them to stderr.
  app.silent = true;
  const router = rootRouter(deps);
  const routes = routeTable(router);
  // Outermost, so the request's own log line and everything below it carry the trace.
  if (deps.tracer) app.use(requestSpan(deps.tracer));
  app.use(requestContext(deps.logger));
  // Outside the error mapping: it sees the final status and X-Error-Code of every answer.
  app.use(httpMetrics(deps.apiMetrics, routePatternOf(routes)));
  // Before the error mapping, so every answer (errors and 404s included) carries the headers.
  app.use(securityHeaders());
  app.use(errorMiddleware(deps.logger, deps.config.BODY_LIMIT_BYTES));
  // Before the API's body parser: the codec endpoint checks its token first, then parses with its own larger limit.
  // Before the API's CORS too: the codec answers the Web UI's origin, whatever CORS_ORIGINS says.
  const codec = codecRoutes(deps.config);
  if (codec) app.use(codec.routes());
  const corsMiddleware = corsPolicy(deps.config);
  if (corsMiddleware) app.use(corsMiddleware);
  // /mcp reads its own JSON-RPC bodies (api/mcp/route.ts): its errors are JSON-RPC's, and its keys are no database paths.
  for (const mw of jsonBody(deps.config.BODY_LIMIT_BYTES)) app.use(exceptPath(MCP_PATH, mw));
  app.use(fixedWordGuard(routes));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

function exceptPath(path: string, mw: Middleware): Middleware {
  return async (ctx, next) => {
    if (ctx.path === path) await next();
    else await mw(ctx, next);
  };
}
