/**
 * Keep-alive connection pools for the guarded HTTP client, one per checked address.
 *
 * A pool shared by every destination could hand a request a socket opened to another address than the one its hop
 * was checked against (a name that now resolves elsewhere): the guard would be bypassed. Here a pool only ever
 * connects to its own address, so a reused socket goes exactly where a fresh one would. Within a pool Node keys free
 * sockets by host, port and TLS name, so two names on one address never share a TLS session meant for the other.
 *
 * A map of quick calls to one service (the common fan-out) reuses its connections instead of opening one per item.
 * Idle sockets close after IDLE_MS (sooner when the server's `Keep-Alive: timeout=` says so); pools beyond MAX_POOLS
 * are forgotten oldest first, their sockets closing as they go idle.
 */
import http from 'node:http';
import https from 'node:https';

const MAX_POOLS = 256;
/** Shorter than common server idle timeouts (Node 5 s, nginx 75 s), so a reused socket is rarely closed under us. */
const IDLE_MS = 2_000;
/** Idle sockets kept per host and port; concurrent requests beyond it open and close their own. */
const MAX_FREE_SOCKETS = 32;

const pools = new Map<string, http.Agent>();

/**
 * The pool for connections to `target` over `protocol` ('http:' or 'https:'). Only the checked address is needed, so
 * this file does not import guarded-fetch's types (which import this file: no circle).
 */
export function poolFor(protocol: string, target: { readonly address: string }): http.Agent {
  const key = `${protocol}//${target.address}`;
  const found = pools.get(key);
  if (found) {
    // Most recently used last: the first entry is the one to forget.
    pools.delete(key);
    pools.set(key, found);
    return found;
  }
  const options = { keepAlive: true, timeout: IDLE_MS, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' as const };
  const agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  pools.set(key, agent);
  if (pools.size > MAX_POOLS) {
    // Not destroyed: requests in flight on it finish, and its sockets then time out idle.
    const oldest = pools.keys().next().value as string;
    pools.delete(oldest);
  }
  return agent;
}
