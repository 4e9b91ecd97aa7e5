/**
 * `send_email` tool: the same mailer and message rules as the action; Message-ID stable per tool call. Every
 * recipient (to, cc, bcc, reply_to) must be in the step's egress allowlist — deny by default.
 */
import { sendEmail } from '../mail/message';
import { assertRecipientsAllowed } from './egress';
import { sendEmailDeclaration as declaration } from '../../domain/tools/send-email';
import type { ToolDefinition } from './types';

export const sendEmailTool = {
  ...declaration,
  async execute(args, ctx) {
    assertRecipientsAllowed(ctx.egress, args);
    return sendEmail(ctx.mailer, args, ctx.idempotencyKey);
  },
} satisfies ToolDefinition<typeof declaration.input, typeof declaration.output>;
