/**
 * The one way the MCP activities reach a server: a session of its own per activity attempt, either a stdio server
 * launched from the operator's declaration (./stdio-session.ts, decision 0420) or a Streamable HTTP server with its
 * credentials opened here, behind the SSRF guard and the step's egress allowlist (./session.ts, decision 0400).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { DEFAULT_EGRESS, type EgressPolicy } from '../../domain/egress';
import type { McpServerSelection } from '../../domain/mcp';
import { serverHeaders, withMcpSession } from './session';
import { withStdioSession } from './stdio-session';

export interface ServerSessionDeps {
  config: Config;
  db: Db;
  logger: Logger;
}

/** What the activity's input says about the session: whose server, under which policy, for how long. */
export interface ServerSessionRequest {
  run_id: string;
  step_id: string;
  owner_id: string;
  egress?: EgressPolicy;
  timeout_ms: number;
}

/** Runs `fn` with a connected client; the session (and a stdio server's process) ends before this returns. */
export async function withServerSession<T>(
  deps: ServerSessionDeps,
  req: ServerSessionRequest,
  server: Pick<McpServerSelection, 'server_id' | 'url' | 'stdio'>,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const signal = Context.current().cancellationSignal;
  if (server.stdio !== undefined) {
    const logger = deps.logger.child({ run_id: req.run_id, step_id: req.step_id });
    return withStdioSession(
      { name: server.stdio, declared: deps.config.MCP_STDIO_SERVERS, timeoutMs: req.timeout_ms, signal, logger },
      fn,
    );
  }
  const headers = await serverHeaders(deps.db, deps.config.PAYLOAD_CODEC_KEYS, req.owner_id, server.server_id);
  return withMcpSession(
    {
      url: server.url,
      headers,
      egress: req.egress ?? DEFAULT_EGRESS,
      allowedHosts: deps.config.HTTP_ALLOWED_HOSTS,
      timeoutMs: req.timeout_ms,
      signal,
    },
    fn,
  );
}
