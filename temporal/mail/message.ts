/**
 * Sending the e-mail of the send_email action and tool (its schema is domain/email.ts): a Message-ID derived from
 * the idempotency key, and the send itself through the Mailer passed in.
 */
import { createHash } from 'node:crypto';
import type { EmailMessage, EmailResult } from '../../domain/email';
import { NonRetryableError } from '../failures';
import type { Mailer } from './mailer';

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
