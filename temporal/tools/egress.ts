/**
 * Enforcement of an agent step's egress policy (domain/egress.ts) in the tool layer, before any side
 * effect. A refusal is NonRetryableError('egress_denied'): the tool call becomes an error result the model sees,
 * flagged in the transcript and counted in the run status; the step goes on.
 */
import type { EgressPolicy } from '../../domain/egress';
import { NonRetryableError } from '../failures';
import { normalHost } from '../../domain/address-policy';

/** True when `address` is listed exactly or its domain is listed as `@domain` (case-insensitive, no subdomains). */
export function emailAllowed(address: string, allowed: readonly string[]): boolean {
  const addr = address.trim().toLowerCase();
  const at = addr.lastIndexOf('@');
  const domain = at >= 0 ? addr.slice(at) : null;
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e.startsWith('@') ? e === domain : e === addr;
  });
}

/** Every recipient an e-mail routes to: to, cc, bcc and reply_to (replies go where reply_to says). */
export function recipientsOf(msg: {
  to: string | string[];
  cc?: string | string[] | undefined;
  bcc?: string | string[] | undefined;
  reply_to?: string | undefined;
}): { field: string; address: string }[] {
  const out: { field: string; address: string }[] = [];
  for (const field of ['to', 'cc', 'bcc', 'reply_to'] as const) {
    const value = msg[field];
    if (value === undefined) continue;
    for (const address of Array.isArray(value) ? value : [value]) out.push({ field, address });
  }
  return out;
}

/** Throws `egress_denied` naming every recipient outside the allowlist (the whole message is refused). */
export function assertRecipientsAllowed(policy: EgressPolicy, msg: Parameters<typeof recipientsOf>[0]): void {
  const denied = recipientsOf(msg).filter((r) => !emailAllowed(r.address, policy.email_recipients));
  if (denied.length === 0) return;
  const list = denied.map((r) => `${r.field} ${r.address}`).join(', ');
  const why =
    policy.email_recipients.length === 0
      ? 'this agent has no e-mail recipient allowlist (egress.email_recipients), so it may e-mail nobody'
      : `allowed: ${policy.email_recipients.join(', ')}`;
  throw new NonRetryableError('egress_denied', `recipient not allowed by the step's egress policy: ${list} (${why})`, {
    details: { tool: 'send_email', target: denied.map((r) => r.address).join(', ') },
  });
}

interface HostPattern {
  host: string;
  wildcard: boolean;
  port: number | null;
}

function parsePattern(entry: string): HostPattern {
  let text = entry.trim().toLowerCase();
  let port: number | null = null;
  const m = /:(\d{1,5})$/.exec(text);
  if (m) {
    port = Number(m[1]);
    text = text.slice(0, m.index);
  }
  const wildcard = text.startsWith('*.');
  return { host: normalHost(wildcard ? text.slice(2) : text), wildcard, port };
}

/** True when `url`'s host (and port, when the entry names one) matches an entry; `*.x.com` matches subdomains only. */
export function hostAllowed(url: URL, allowed: readonly string[] | null): boolean {
  if (allowed === null) return true;
  const host = normalHost(url.hostname);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return allowed.some((entry) => {
    const p = parsePattern(entry);
    const hostOk = p.wildcard ? host.endsWith(`.${p.host}`) : host === p.host;
    return hostOk && (p.port === null || p.port === port);
  });
}

/** The per-hop check of http_fetch (guarded-fetch's `checkHop`): the first URL and every redirect target. */
export function assertHostAllowed(policy: EgressPolicy, url: URL, hop: number): void {
  if (hostAllowed(url, policy.http_hosts)) return;
  const where = hop === 0 ? '' : ` (redirect ${hop})`;
  throw new NonRetryableError(
    'egress_denied',
    `host ${url.host}${where} is not allowed by the step's egress policy (allowed: ${
      policy.http_hosts?.length ? policy.http_hosts.join(', ') : 'none'
    })`,
    { details: { tool: 'http_fetch', target: url.host } },
  );
}
