/**
 * `/mcp`: Stepwise as an MCP server over Streamable HTTP, in the API process. Stateless: no MCP session is kept, every
 * request authenticates with its own `Authorization: Bearer <api key>` (the /api/v1 auth and rate limits), and any API
 * process answers any request — what a task needs is the run, in MongoDB and Temporal
 * (docs/decisions/0450-mcp-server-sdk-and-transport.md). Errors before the MCP layer (no key, rate limited, a bad
 * body, a browser `Origin` that may not call it) are JSON-RPC error bodies with the HTTP status that says what happened
 * (401, 403, 429, 413, 400).
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { baseUrlOf } from '../http/caller';
import { ApiError, BadRequestError, PayloadTooLargeError } from '../http/errors';
import { jsonParser, requireJsonType } from '../middleware/body';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { checkOrigin } from './origin';
import { createMcpServer } from './server';
import '../http/state';

export const MCP_PATH = '/mcp';

/** JSON-RPC's codes for what fails before a request reaches the MCP layer. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
const RPC_CODES: Record<string, number> = { malformed_json: PARSE_ERROR, batch: INVALID_REQUEST };

export function mcpRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const guard = [
    jsonRpcErrors(deps.config.BODY_LIMIT_BYTES),
    checkOrigin(deps.config),
    deps.limits.perIp,
    ...authenticated(deps),
  ];
  const parse = jsonParser(deps.config.BODY_LIMIT_BYTES);

  router.post(MCP_PATH, ...guard, requireJsonType, parse, async (ctx) => {
    if (Array.isArray(ctx.request.body)) {
      // JSON-RPC batches left the protocol in 2025-06-18; one message per request keeps each answer one tool result.
      throw new BadRequestError('JSON-RPC batches are not supported: send one message per request', 'batch');
    }
    acceptJson(ctx);
    await serve(ctx, deps, callerOf(ctx, deps));
  });
  // GET (a server-initiated event stream) and DELETE (ending a session) have nothing to do without sessions: the
  // router answers them 405 with `Allow: POST`, which MCP clients read as "no stream".
  return router;
}

/**
 * The transport answers 406 unless `Accept` lists both JSON and event streams. Answers here are always JSON
 * (`enableJsonResponse`), so a client that accepts JSON (or says nothing, or anything) is served as one that listed
 * both.
 */
function acceptJson(ctx: Context): void {
  const accept = ctx.get('Accept');
  if (accept === '' || /\*\/\*|application\/(\*|json)/i.test(accept)) {
    ctx.req.headers.accept = 'application/json, text/event-stream';
  }
}

function callerOf(ctx: Context, deps: ApiDeps): McpCaller {
  const user = ctx.state.user;
  if (!user) throw new Error('/mcp mounted without authentication');
  return {
    ownerId: user.id,
    keyId: user.keyId,
    baseUrl: baseUrlOf(deps.config.PUBLIC_URL, ctx),
    chargeRunStart: () => deps.limits.runStarts(ctx),
    log: ctx.state.log,
  };
}

/** One request, one server and transport (closed with the response); the SDK writes the answer itself. */
async function serve(ctx: Context, deps: ApiDeps, caller: McpCaller): Promise<void> {
  const server = createMcpServer(deps, caller);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.respond = false;
  ctx.res.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  } catch (err) {
    caller.log.error({ err }, 'mcp request failed');
    if (!ctx.res.headersSent) {
      ctx.res.writeHead(500, { 'Content-Type': 'application/json' });
      ctx.res.end(JSON.stringify(jsonRpcError(SERVER_ERROR, 'internal server error')));
    }
  }
}

/** ApiErrors (and the body parser's) as a JSON-RPC error body with the HTTP status and headers of the error. */
function jsonRpcErrors(bodyLimitBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const apiError = asApiError(err, bodyLimitBytes);
      // Anything else (an unreachable database included) is the app's error middleware's: 503 or 500.
      if (!apiError) throw err;
      for (const [k, v] of Object.entries(apiError.headers)) ctx.set(k, v);
      ctx.set('X-Error-Code', apiError.code);
      ctx.status = apiError.status;
      const code = RPC_CODES[apiError.code] ?? SERVER_ERROR;
      ctx.body = jsonRpcError(code, apiError.message, { http_status: apiError.status, code: apiError.code });
    }
  };
}

function asApiError(err: unknown, bodyLimitBytes: number): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; type?: unknown };
  if (e.status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError(bodyLimitBytes);
  if (err instanceof SyntaxError || e.type === 'entity.parse.failed') {
    return new BadRequestError('malformed JSON body', 'malformed_json');
  }
  return undefined;
}

function jsonRpcError(code: number, message: string, data?: Record<string, unknown>) {
  return { jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null };
}
