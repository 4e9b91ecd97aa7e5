/**
 * The e-mail shared by the send_email action and tool: its schema, a Message-ID derived from the idempotency key,
 * and the send itself through the Mailer passed in.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { NonRetryableError } from '../failures';
import type { Mailer } from './mailer';

const address = z.email().max(254);
/** One address or a list (≤ 50). */
export const recipientsSchema = z.union([address, z.array(address).min(1).max(50)]);

// A CR or LF in a header value would let a rendered value inject headers; nodemailer encodes them, we refuse them.
const headerText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/[\r\n]/.test(s), 'must be a single line');

/** The fields of an e-mail (all strict). `text` or `html` is required; callers check it with `requireBody`. */
export const emailFields = {
  to: recipientsSchema.describe('Recipient address or list of addresses'),
  cc: recipientsSchema.optional().describe('Cc address or list'),
  bcc: recipientsSchema.optional().describe('Bcc address or list'),
  subject: headerText(998).min(1).describe('Subject line (one line)'),
  text: z
    .string()
    .max(256 * 1024)
    .optional()
    .describe('Plain-text body'),
  html: z
    .string()
    .max(256 * 1024)
    .optional()
    .describe('HTML body'),
  reply_to: address.optional().describe('Reply-To address'),
};

export const emailSchema = z.strictObject(emailFields);
export type EmailMessage = z.infer<typeof emailSchema>;

export const emailResultSchema = z.object({
  message_id: z.string(),
  accepted: z.array(z.string()),
  rejected: z.array(z.string()),
});
export type EmailResult = z.infer<typeof emailResultSchema>;

/** Run-mode rule: a message needs a body. */
export function requireBody(msg: { text?: string; html?: string }, ctx: z.RefinementCtx): void {
  if (msg.text === undefined && msg.html === undefined) {
    ctx.addIssue({ code: 'custom', message: 'text or html is required', path: ['text'] });
  }
}

function domainOf(from: string): string {
  const match = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from);
  return match?.[1] ?? 'stepwise.local';
}

/**
 * `<hash of the idempotency key @ sender domain>`: every attempt of the same step sends the same Message-ID, so
 * a duplicate caused by a retry after a lost acknowledgement is recognisable (and deduplicated by most clients).
 */
export function messageIdFor(idempotencyKey: string, from: string): string {
  const hash = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40);
  return `<${hash}@${domainOf(from)}>`;
}

function list(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}

function addresses(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((v) => {
    if (typeof v === 'string') return v;
    const address = (v as { address?: unknown }).address;
    return typeof address === 'string' ? address : '';
  });
}

/** Sends one message. SMTP/network errors propagate unchanged; `toApplicationFailure` classifies them by code. */
export async function sendEmail(mailer: Mailer, msg: EmailMessage, idempotencyKey: string): Promise<EmailResult> {
  if (msg.text === undefined && msg.html === undefined) {
    throw new NonRetryableError('invalid_config', 'text or html is required');
  }
  const messageId = messageIdFor(idempotencyKey, mailer.from);
  const info: { messageId?: string; accepted?: unknown; rejected?: unknown } = await mailer.transport.sendMail({
    from: mailer.from,
    to: list(msg.to),
    cc: list(msg.cc),
    bcc: list(msg.bcc),
    replyTo: msg.reply_to,
    subject: msg.subject,
    text: msg.text,
    html: msg.html,
    messageId,
  });
  return {
    message_id: info.messageId ?? messageId,
    accepted: addresses(info.accepted),
    rejected: addresses(info.rejected),
  };
}
