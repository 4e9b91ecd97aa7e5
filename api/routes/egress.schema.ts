/**
 * The `egress` field of agent templates and workflow steps (temporal/contract/egress.ts): shape checks of the
 * allowlist entries, shared by both write schemas and the documents they publish. Problems name the entry
 * (`egress.http_hosts[2]: …`).
 */
import { z } from 'zod';
import type { EgressSettings } from '../../temporal/contract/egress';

export const EGRESS_LIMITS = { entries: 100, entryChars: 254 } as const;

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** A DNS name (or IPv4 address) of lower-case labels of ≤ 63 characters. Split by hand: no backtracking regex. */
function isHostName(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  return text.split('.').every((label) => label.length <= 63 && LABEL.test(label));
}

const entry = () => z.string().trim().toLowerCase().min(1).max(EGRESS_LIMITS.entryChars);

const emailEntry = entry().refine(
  (s) => (s.startsWith('@') ? isHostName(s.slice(1)) : z.email().safeParse(s).success),
  'must be an e-mail address (ops@acme.com) or a whole domain (@acme.com)',
);

const hostEntry = entry().refine((s) => {
  const m = /^(\*\.)?([^:]+)(?::(\d{1,5}))?$/.exec(s);
  if (!m) return false;
  const port = m[3] === undefined ? null : Number(m[3]);
  return isHostName(m[2] ?? '') && (port === null || (port >= 1 && port <= 65535));
}, 'must be a host name, optionally *. for its subdomains and :port (api.acme.com, *.acme.com, acme.com:8443)');

export const egressSettings: z.ZodType<EgressSettings> = z
  .strictObject({
    email_recipients: z
      .array(emailEntry)
      .max(EGRESS_LIMITS.entries)
      .optional()
      .meta({
        description:
          'Who send_email may address (to, cc, bcc and reply_to alike): exact addresses or `@domain` for a whole ' +
          'domain (not its subdomains). Absent or empty: nobody — e-mail is deny-by-default for agents.',
        example: ['ops@acme.com', '@acme.com'],
      }),
    http_hosts: z
      .array(hostEntry)
      .max(EGRESS_LIMITS.entries)
      .optional()
      .meta({
        description:
          'Hosts http_fetch may reach, checked on every redirect hop: `host`, `*.host` (subdomains only), each with an ' +
          'optional `:port`. Absent: any public host; empty: none. The SSRF guard applies either way.',
        example: ['api.acme.com', '*.acme.com'],
      }),
  })
  .meta({
    id: 'EgressPolicy',
    description:
      "Agents only: where the agent's tools may send e-mail and HTTP requests. On a workflow step, each field set " +
      "replaces the template's.",
  });
