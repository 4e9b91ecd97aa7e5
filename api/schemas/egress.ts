/**
 * The `egress` field of agent templates and workflow steps (domain/egress.ts): shape checks of the
 * allowlist entries, shared by both write schemas and the documents they publish. Problems name the entry
 * (`egress.http_hosts[2]: …`).
 */
import { z } from 'zod';
import type { EgressSettings } from '../../domain/egress';

export const EGRESS_LIMITS = { entries: 100, entryChars: 254 } as const;

/** A DNS label (or an IPv4 address's number): letters, digits and inner hyphens, ≤ 63 characters. */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = `${LABEL}(?:\\.${LABEL})*`;
/** 1–65535, no leading zero. */
const PORT = '(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
/** An RFC 5322 dot-atom local part. */
const LOCAL = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";

/**
 * The whole rule of each entry is its pattern (and length), so validation and the document are the same rule; the
 * server keeps entries lower-cased.
 */
export const HOST_ENTRY_PATTERN = new RegExp(`^(?:\\*\\.)?${HOST}(?::${PORT})?$`);
export const EMAIL_ENTRY_PATTERN = new RegExp(`^(?:${LOCAL})?@${HOST}$`);

const entry = (pattern: RegExp, message: string) =>
  z.string().max(EGRESS_LIMITS.entryChars).regex(pattern, message).toLowerCase();

const emailEntry = entry(EMAIL_ENTRY_PATTERN, 'must be an e-mail address (ops@acme.com) or a whole domain (@acme.com)');

const hostEntry = entry(
  HOST_ENTRY_PATTERN,
  'must be a host name, optionally *. for its subdomains and :port (api.acme.com, *.acme.com, acme.com:8443)',
);

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
