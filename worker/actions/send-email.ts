/** `send_email`: one message over SMTP with a Message-ID stable per run + step. */
import { z } from 'zod';
import { emailFields, emailResultSchema, requireBody, sendEmail } from '../mail/message';
import type { ActionDefinition } from './types';

const config = z.strictObject(emailFields);

export const sendEmailAction = {
  name: 'send_email',
  description:
    'Send an e-mail over SMTP (to/cc/bcc, subject, text and/or html). Every retry of the step reuses the same ' +
    'Message-ID, so a duplicate delivery is recognisable.',
  config,
  refine: requireBody,
  output: emailResultSchema,
  async execute(cfg, ctx) {
    return sendEmail(ctx.mailer, cfg, ctx.idempotencyKey);
  },
} satisfies ActionDefinition<'send_email', typeof config, typeof emailResultSchema>;
