/**
 * One MCP session per activity attempt: connect (initialize), do one thing, close. Nothing is pinned to a worker
 * between activities, so a restarted or different worker serves the next call alike; the server's credentials are
 * read from MongoDB and opened here, inside the activity, and never leave it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Db } from 'mongodb';
import { findOwnMcpServer, type McpCredentials } from '../../db/mcp-servers';
import { openJson } from '../../shared/codec/sealed-json';
import type { CodecKey } from '../../domain/codec-keys';
import type { EgressPolicy } from '../../domain/egress';
import { NonRetryableError } from '../failures';
import { guardedMcpFetch } from './guarded-transport';

export const MCP_CLIENT_INFO = { name: 'stepwise', version: '1.0.0' };

/** The headers the server's stored auth asks for; a server deleted since the run started fails non-retryably. */
export async function serverHeaders(
  db: Db,
  keys: readonly CodecKey[],
  ownerId: string,
  serverId: string,
): Promise<Record<string, string>> {
  const doc = await findOwnMcpServer(db, ownerId, serverId);
  if (!doc) throw new NonRetryableError('invalid_config', `MCP server ${serverId} no longer exists`);
  if (!doc.credentials) return {};
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
  return creds.bearer_token !== undefined ? { authorization: `Bearer ${creds.bearer_token}` } : (creds.headers ?? {});
}

export interface SessionOptions {
  url: string;
  headers: Record<string, string>;
  egress: EgressPolicy;
  allowedHosts: readonly string[];
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Connects, runs `fn` with the client, and closes the session whatever happens. */
export async function withMcpSession<T>(opts: SessionOptions, fn: (client: Client) => Promise<T>): Promise<T> {
  const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
    requestInit: { headers: opts.headers },
    fetch: guardedMcpFetch(opts),
  });
  const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: opts.timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) });
    return await fn(client);
  } finally {
    // Ends the server's session (DELETE) when it keeps one; a failure to do so changes nothing for the caller.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
