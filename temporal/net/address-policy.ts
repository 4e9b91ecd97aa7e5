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

/** Parses HTTP_ALLOWED_HOSTS entries: `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address. */
export function parseHostEntry(entry: string): HostEntry {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: normalHost(bracketed[1] ?? ''), port: bracketed[2] ? Number(bracketed[2]) : null };
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    const [host = '', port = ''] = text.split(':');
    return { host: normalHost(host), port: /^\d+$/.test(port) ? Number(port) : null };
  }
  return { host: normalHost(text), port: null };
}

/** True when `url` targets a host (and port, when the entry names one) listed in `allowed`. */
export function isAllowedHost(url: URL, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return false;
  const host = normalHost(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return allowed.some((entry) => {
    const e = parseHostEntry(entry);
    return e.host === host && (e.port === null || e.port === port);
  });
}
