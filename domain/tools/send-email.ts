/**
 * `send_email` tool: the same mailer and message rules as the action; Message-ID stable per tool call. Every
 * recipient (to, cc, bcc, reply_to) must be in the step's egress allowlist — deny by default.
 */
import { emailResultSchema, emailSchema } from '../email';
import type { ToolDeclaration } from './types';

export const sendEmailDeclaration = {
  name: 'send_email' as const,
  description:
    'Send an e-mail. Give `to` (an address or a list), `subject`, and a `text` and/or `html` body; optional cc, bcc ' +
    'and reply_to. Only recipients allowed by the step may be used.',
  input: emailSchema,
  output: emailResultSchema,
} satisfies ToolDeclaration;
