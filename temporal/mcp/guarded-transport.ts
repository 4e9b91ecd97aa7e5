/**
 * The MCP client's HTTP, through the SSRF guard: every request of the Streamable HTTP transport goes out with
 * guardedFetch (temporal/net/guarded-fetch.ts), so the server's host is checked like http_fetch's — non-public
 * addresses refused unless in HTTP_ALLOWED_HOSTS, the connection pinned to the checked address, every redirect hop
 * checked against the step's egress allowlist. The body is read whole (bounded): each POST's answer, JSON or a short
 * event stream, ends with the response to that request.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { EgressPolicy } from '../../domain/egress';
import { guardedFetch } from '../net/guarded-fetch';
import { assertHostAllowed } from '../tools/egress';

/** An answer above this fails the call (a tool result is cut far below it before the model sees it). */
export const MCP_RESPONSE_MAX_BYTES = 8 * 1024 * 1024;

export interface GuardedTransportOptions {
  egress: EgressPolicy;
  allowedHosts: readonly string[];
  /** Time limit of each HTTP exchange. */
  timeoutMs: number;
  signal?: AbortSignal;
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** A `fetch` for StreamableHTTPClientTransport. */
export function guardedMcpFetch(opts: GuardedTransportOptions): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    // The standalone GET stream carries only server-initiated messages, which a tool call does not need; 405 is the
    // protocol's "no such stream", so the transport goes on without it instead of holding a request open.
    if (method === 'GET') return new Response(null, { status: 405 });
    const signals = [opts.signal, init?.signal ?? undefined].filter((s): s is AbortSignal => s !== undefined);
    const res = await guardedFetch({
      method,
      url: url.toString(),
      headers: headersOf(init),
      ...(typeof init?.body === 'string' ? { body: init.body } : {}),
      timeoutMs: opts.timeoutMs,
      maxBytes: MCP_RESPONSE_MAX_BYTES,
      allowedHosts: opts.allowedHosts,
      checkHop: (hop, n) => assertHostAllowed(opts.egress, hop, n),
      // Never a kept-alive socket: the guard re-sends a request whose reused socket was reset, and a tool call must
      // not reach the server twice.
      pooled: false,
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
    });
    if (res.truncated) throw new Error(`the MCP server's answer exceeds ${MCP_RESPONSE_MAX_BYTES} bytes`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) headers.set(name, value);
    const nullBody = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers });
  };
}
