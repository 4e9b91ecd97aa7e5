/** `send_email`: one message over SMTP with a Message-ID stable per run + step. */
import { sendEmailDeclaration } from '../../domain/actions/send-email';
import { sendEmail } from '../mail/message';
import type { ActionDefinition } from './types';

export const sendEmailAction = {
  ...sendEmailDeclaration,
  async execute(cfg, ctx) {
    return sendEmail(ctx.mailer, cfg, ctx.idempotencyKey);
  },
} satisfies ActionDefinition<'send_email', typeof sendEmailDeclaration.config, typeof sendEmailDeclaration.output>;
