/**
 * The e-mail shared by the send_email action and tool: its fields, its result and the run-mode body rule. Pure
 * schemas, so the API validates and publishes them without the worker's SMTP code (temporal/mail/message.ts sends).
 */
import { z } from 'zod';

const address = z.email().max(254);
/** One address or a list (≤ 50). */
export const recipientsSchema = z.union([address, z.array(address).min(1).max(50)]);

// A CR or LF in a header value would let a rendered value inject headers; nodemailer encodes them, we refuse them.
const headerText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/[\r\n]/.test(s), 'must be a single line');

/** An e-mail (strict: no other fields). `text` or `html` is required; callers check it with `requireBody`. */
export const emailSchema = z.strictObject({
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
});
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
