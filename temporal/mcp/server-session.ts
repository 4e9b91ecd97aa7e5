/**
 * The one way the MCP activities reach a server: a session of its own per activity attempt — connect (initialize),
 * do one thing, close — either a stdio server launched from the operator's declaration (./stdio-session.ts, decision
 * 0420) or a Streamable HTTP server behind the SSRF guard and the step's egress allowlist (decision 0400). Nothing is
 * pinned to a worker between activities, so a restarted or different worker serves the next call alike; an HTTP
 * server's credentials are read from MongoDB and opened here, inside the activity, sent only to the origin they were
 * given for, and taken out of everything the server answers (./redact.ts): they never leave the activity.
 */
import { Context } from '@temporalio/activity';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { credentialsOrigin, findOwnMcpServer, type McpCredentials } from '../../db/mcp-servers';
import type { CodecKey } from '../../domain/codec-keys';
import { DEFAULT_EGRESS, type EgressPolicy } from '../../domain/egress';
import type { McpServerSelection } from '../../domain/mcp';
import { openJson } from '../../shared/codec/sealed-json';
import { NonRetryableError } from '../failures';
import { guardedMcpFetch } from './guarded-transport';
import { redactDeep, redactError, secretForms } from './redact';
import { MCP_CLIENT_INFO, withStdioSession } from './stdio-session';

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

/** What a session sends to the server, and the forms of those secrets to take out of whatever it answers. */
interface SessionAuth {
  headers: Record<string, string>;
  secrets: string[];
}

/**
 * The headers the server's stored auth asks for, for a session with `url` (the run's snapshot of the server's URL).
 * A server deleted since the run started fails non-retryably, and so do credentials given for another origin than
 * `url`'s: the server moved since the run started, and its new secret is for its new host only (decision 0403).
 */
async function serverAuth(
  db: Db,
  keys: readonly CodecKey[],
  ownerId: string,
  serverId: string,
  url: string,
): Promise<SessionAuth> {
  const doc = await findOwnMcpServer(db, ownerId, serverId);
  if (!doc) throw new NonRetryableError('invalid_config', `MCP server ${serverId} no longer exists`);
  if (!doc.credentials) return { headers: {}, secrets: [] };
  let creds: McpCredentials;
  try {
    creds = (await openJson(keys, doc.credentials)) as McpCredentials;
  } catch {
    // Never the error's text: it could only name keys, but say nothing of the credentials at all.
    throw new NonRetryableError(
      'invalid_config',
      `the credentials of MCP server ${doc.name} cannot be opened with PAYLOAD_CODEC_KEYS; set its auth again`,
    );
  }
  const origin = credentialsOrigin(url);
  if (creds.origin === undefined) {
    throw new NonRetryableError(
      'invalid_config',
      `the credentials of MCP server ${doc.name} were stored before they were bound to an origin; set its auth again`,
    );
  }
  if (creds.origin !== origin) {
    throw new NonRetryableError(
      'invalid_config',
      `MCP server ${doc.name} moved since this run started: its credentials are for ${creds.origin}, not ${origin}, ` +
        'and are not sent there; start a new run',
    );
  }
  const headers: Record<string, string> =
    creds.bearer_token !== undefined ? { authorization: `Bearer ${creds.bearer_token}` } : (creds.headers ?? {});
  return { headers, secrets: secretForms(Object.values(headers).concat(creds.bearer_token ?? [])) };
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
  const { headers, secrets } = await serverAuth(
    deps.db,
    deps.config.PAYLOAD_CODEC_KEYS,
    req.owner_id,
    server.server_id,
    server.url,
  );
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers },
    fetch: guardedMcpFetch({
      egress: req.egress ?? DEFAULT_EGRESS,
      allowedHosts: deps.config.HTTP_ALLOWED_HOSTS,
      timeoutMs: req.timeout_ms,
      signal,
    }),
  });
  const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: req.timeout_ms, signal });
    // Whatever the server said — a result, a tool list, an error — without its own credentials in it (./redact.ts).
    return redactDeep(await fn(client), secrets);
  } catch (err) {
    throw redactError(err, secrets);
  } finally {
    // Ends the server's session (DELETE) when it keeps one; a failure to do so changes nothing for the caller.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
