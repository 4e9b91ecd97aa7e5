/**
 * Which destinations the HTTP action and tool may reach: public unicast addresses only, unless the host is listed
 * in HTTP_ALLOWED_HOSTS. Checked on the *resolved* address (and every redirect hop), so names that resolve inward
 * and odd IP encodings (decimal, octal, hex — normalised by the WHATWG URL parser) are caught.
 */
import ipaddr from 'ipaddr.js';

/**
 * Why `ip` is refused (the ipaddr.js range name, e.g. `loopback`, `private`, `linkLocal`, `ipv4Mapped`), or null when
 * it is a public unicast address. IPv6 must be global unicast (2000::/3); IPv4-mapped, IPv4-compatible (::/96),
 * NAT64, 6to4 and Teredo forms are refused because they can carry an internal IPv4 address.
 */
export function refusedRange(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return 'invalid';
  const addr = ipaddr.parse(ip);
  const range = addr.range();
  if (addr.kind() === 'ipv4') return range === 'unicast' ? null : range;
  if (range !== 'unicast') return range;
  const first = (addr as ipaddr.IPv6).parts[0] ?? 0;
  // Everything ipaddr calls "unicast" outside 2000::/3 is unassigned space or the deprecated IPv4-compatible ::a.b.c.d.
  if (first < 0x2000 || first > 0x3fff) return first === 0 ? 'ipv4Compatible' : 'reserved';
  return null;
}

export interface HostEntry {
  host: string;
  port: number | null;
}

/** `URL.hostname` without IPv6 brackets or a trailing dot, lower-cased. */
export function normalHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  // Compare IP literals in canonical form (so `::ffff:7f00:1` and `::ffff:127.0.0.1` are the same entry).
  return ipaddr.isValid(host) ? ipaddr.parse(host).toString() : host;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const PORT = /^[0-9]{1,5}$/;

function parsePort(text: string): number | null {
  if (!PORT.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * Parses an HTTP_ALLOWED_HOSTS entry strictly: `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address.
 * Returns why the entry is malformed instead of guessing: a lenient parse once read `host:abc` as "host, any port".
 */
export function parseHostEntry(entry: string): HostEntry | { problem: string } {
  const text = entry.trim();
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(.*))?$/.exec(text);
  if (bracketed) {
    const host = bracketed[1] ?? '';
    if (!ipaddr.IPv6.isValid(host)) return { problem: `"${text}": not an IPv6 address in brackets` };
    if (bracketed[2] === undefined) return { host: normalHost(host), port: null };
    const port = parsePort(bracketed[2]);
    return port === null
      ? { problem: `"${text}": the port must be a number from 1 to 65535` }
      : { host: normalHost(host), port };
  }
  const colons = text.split(':').length - 1;
  if (colons >= 2) {
    return ipaddr.IPv6.isValid(text) ? { host: normalHost(text), port: null } : { problem: `"${text}": not a host` };
  }
  const [host = '', portText] = text.split(':');
  // A fully qualified name may end with a dot (normalHost drops it).
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!HOST_NAME.test(name) && !ipaddr.IPv4.isValidFourPartDecimal(name)) {
    return { problem: `"${text}": not a host name or IP address (no scheme, path or wildcard)` };
  }
  if (portText === undefined) return { host: normalHost(host), port: null };
  const port = parsePort(portText);
  return port === null
    ? { problem: `"${text}": the port must be a number from 1 to 65535` }
    : { host: normalHost(host), port };
}

/** True when `url` targets a host (and port, when the entry names one) listed in `allowed`. */
export function isAllowedHost(url: URL, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return false;
  const host = normalHost(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return allowed.some((entry) => {
    const e = parseHostEntry(entry);
    // Configuration is checked at start (config.ts); a malformed entry that got here anyway allows nothing.
    if ('problem' in e) return false;
    return e.host === host && (e.port === null || e.port === port);
  });
}
