/**
 * The SSRF-guarded HTTP client shared by the `http_request` action and the `http_fetch` tool.
 *
 * Per hop: parse the URL (http/https only, no credentials), resolve every address of the host, refuse the hop if any
 * address is not public (address-policy.ts) unless the host is in HTTP_ALLOWED_HOSTS, then connect to exactly the
 * address that was checked (a pinned `lookup`, and a kept-alive socket only from that address's own pool), so a DNS
 * answer that changes between check and connect (rebinding) cannot redirect the connection. Redirects are followed
 * by hand (at most 5) and every hop is checked again. One time limit covers the whole exchange; bodies beyond
 * `maxBytes` are cut off and flagged. A caller's `checkHop` sees every hop's URL first (the agent egress policy).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { NonRetryableError, RetryableError } from '../failures';
import { isAllowedHost, normalHost, refusedRange } from '../../domain/address-policy';
import { poolFor } from './pinned-pools';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses; injectable so tests can simulate DNS answers. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface GuardedFetchOptions {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Time limit of the whole exchange, redirects included. */
  timeoutMs: number;
  maxBytes: number;
  /** HTTP_ALLOWED_HOSTS: `host` or `host:port` entries that may resolve to otherwise refused addresses. */
  allowedHosts: readonly string[];
  signal?: AbortSignal;
  resolver?: Resolver;
  /**
   * Called with the URL of every hop (0 = the first request, then each redirect target) before it is resolved or
   * contacted; throw to refuse the hop. The caller's own destination policy, on top of the SSRF checks.
   */
  checkHop?: (url: URL, hop: number) => void;
  /**
   * False: a new connection for each request, never a kept-alive one. An idempotent request on a reused socket that
   * the server reset is sent again on a fresh one (requestOnce); a caller that must never send any request twice (a
   * non-idempotent MCP tool call, whatever its method) turns pooling off, so that case cannot arise. Default true.
   */
  pooled?: boolean;
}

export interface GuardedResponse {
  status: number;
  /** The URL of the last hop. */
  url: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  redirects: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** At most this many redirects are followed; one more refuses the request. */
const MAX_REDIRECTS = 5;

/**
 * The only request headers a redirect carries to another origin. Browsers and fetch drop `authorization` and
 * `cookie`; a user's HTTP step can hold any custom credential header (`x-api-key`, `private-token`…), so everything
 * not on this list of plain content-negotiation headers stays with the origin it was written for.
 */
const CROSS_ORIGIN_KEPT: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
]);

/** Checks the URL of one hop and returns the address to connect to. Throws `url_refused` (non-retryable). */
export async function checkTarget(
  url: URL,
  allowedHosts: readonly string[],
  resolver: Resolver,
): Promise<ResolvedAddress> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NonRetryableError('url_refused', `url: only http and https are allowed, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new NonRetryableError('url_refused', 'url: credentials in the URL are not allowed');
  }
  const host = normalHost(url.hostname);
  const allowed = isAllowedHost(url, allowedHosts);
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolver(host);
  if (addresses.length === 0) {
    throw new NonRetryableError('dns_not_found', `url: ${host} has no address`);
  }
  if (!allowed) {
    for (const a of addresses) {
      const range = refusedRange(a.address);
      if (range !== null) {
        throw new NonRetryableError('url_refused', `url: ${host} resolves to a non-public address (${range})`, {
          details: { host, range },
        });
      }
    }
  }
  return addresses[0] as ResolvedAddress;
}

/** A `lookup` that answers with the already-checked address, whatever the name (supports `all: true` callers). */
function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface HopResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

interface Hop {
  url: URL;
  target: ResolvedAddress;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  maxBytes: number;
  signal: AbortSignal;
  /** Redirect responses are not read: their body is irrelevant and may be large. */
  readBody: (status: number, headers: Record<string, string>) => boolean;
}

/** Errors of a reused kept-alive socket the server had closed while it sat idle, before any answer came back. */
const STALE_SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** A reused socket failed before any answer (one of STALE_SOCKET_CODES): worth one more try on a fresh connection. */
class StaleSocketError extends Error {}

/** The methods RFC 9110 calls idempotent: sending one again has no effect the first did not already have. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * One hop over a pooled connection (pinned-pools.ts). When the reused socket turns out closed, an idempotent request
 * goes again on a fresh connection. Any other (a POST) fails the attempt instead: the server may have received it
 * before it reset the socket, and whether to send it again is the step's retry policy's call, not this client's.
 */
async function requestOnce(hop: Hop, pooled: boolean): Promise<HopResult> {
  if (!pooled) return send(hop, false);
  try {
    return await send(hop, poolFor(hop.url.protocol, hop.target));
  } catch (err) {
    if (!(err instanceof StaleSocketError)) throw err;
    if (!IDEMPOTENT_METHODS.has(hop.method.toUpperCase())) {
      throw new RetryableError('network', `the connection was reset before an answer came: ${err.message}`, {
        cause: err,
      });
    }
    return send(hop, false);
  }
}

function send(hop: Hop, agent: http.Agent | false): Promise<HopResult> {
  return new Promise<HopResult>((resolve, reject) => {
    const { url } = hop;
    const mod = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string | number> = { ...hop.headers, host: url.host };
    if (hop.body !== undefined) headers['content-length'] = Buffer.byteLength(hop.body);
    const req = mod.request({
      protocol: url.protocol,
      hostname: normalHost(url.hostname),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: hop.method,
      headers,
      // The pool of the checked address only: its sockets were all opened to that address.
      agent,
      lookup: pinnedLookup(hop.target),
      signal: hop.signal,
    });
    let answered = false;
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && !answered && !hop.signal.aborted && STALE_SOCKET_CODES.has(err.code ?? '');
      reject(stale ? new StaleSocketError(err.message) : err);
    });
    req.on('response', (res) => {
      answered = true;
      const base = { status: res.statusCode ?? 0, headers: flatHeaders(res) };
      if (hop.method === 'HEAD' || !hop.readBody(base.status, base.headers)) {
        res.destroy();
        resolve({ ...base, body: Buffer.alloc(0), truncated: false });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = hop.maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size += room;
          truncated = true;
          // Stop downloading: the rest is never read.
          res.destroy();
          resolve({ ...base, body: Buffer.concat(chunks, size), truncated });
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => resolve({ ...base, body: Buffer.concat(chunks, size), truncated }));
      res.on('error', (err) => {
        if (!truncated) reject(err);
      });
    });
    req.end(hop.body);
  });
}

/** Rejects when `signal` aborts: bounds steps that cannot be cancelled themselves (DNS lookups). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Performs the request; see the module comment for the rules. Refusals are NonRetryableError('url_refused'). */
export async function guardedFetch(options: GuardedFetchOptions): Promise<GuardedResponse> {
  const resolver = options.resolver ?? systemResolver;
  const controller = new AbortController();
  // The error is made only when the time is up: an Error captures its stack, which costs more than a quick request.
  const timer = setTimeout(() => {
    const timeout = new RetryableError('timeout', `request took longer than ${options.timeoutMs} ms`, {
      details: { timeout_ms: options.timeoutMs },
    });
    controller.abort(timeout);
  }, options.timeoutMs);
  const onOuterAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (options.signal?.aborted) onOuterAbort();

  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new NonRetryableError('invalid_config', 'url: not a valid URL');
  }
  let method = options.method.toUpperCase();
  let body = options.body;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  headers['accept-encoding'] ??= 'identity';

  try {
    for (let redirects = 0; ; redirects++) {
      options.checkHop?.(url, redirects);
      const target = await raceAbort(checkTarget(url, options.allowedHosts, resolver), controller.signal);
      const res = await requestOnce(
        {
          url,
          target,
          method,
          headers,
          body,
          maxBytes: options.maxBytes,
          signal: controller.signal,
          readBody: (status, h) => !(REDIRECT_STATUSES.has(status) && h.location !== undefined),
        },
        options.pooled ?? true,
      );
      const location = res.headers.location;
      if (!REDIRECT_STATUSES.has(res.status) || location === undefined) {
        return { ...res, url: url.toString(), redirects };
      }
      if (redirects >= MAX_REDIRECTS) {
        throw new NonRetryableError('url_refused', `url: more than ${MAX_REDIRECTS} redirects`, {
          details: { redirects },
        });
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new NonRetryableError('url_refused', 'url: a redirect pointed to an invalid URL');
      }
      if (next.origin !== url.origin) {
        for (const h of Object.keys(headers)) if (!CROSS_ORIGIN_KEPT.has(h)) delete headers[h];
      }
      // 303, and 301/302 after a POST, turn into a GET without a body (as fetch and browsers do).
      if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      url = next;
    }
  } catch (err) {
    // An abort surfaces as the library's AbortError: report why we aborted instead.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}
