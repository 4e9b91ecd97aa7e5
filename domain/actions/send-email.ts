/** `send_email`: one message over SMTP with a Message-ID stable per run + step. */
import { emailResultSchema, emailSchema, requireBody } from '../email';
import type { ActionDeclaration } from './types';

export const sendEmailDeclaration = {
  name: 'send_email',
  effect: 'side_effect',
  description:
    'Send an e-mail over SMTP (to/cc/bcc, subject, text and/or html). Every retry of the step reuses the same ' +
    'Message-ID, so a duplicate delivery is recognisable.',
  config: emailSchema,
  refine: requireBody,
  output: emailResultSchema,
  template: {
    name: 'Send e-mail',
    short_description: 'Sends one e-mail over SMTP.',
    default_prompt:
      'Send an e-mail. Set to, subject and text (or html) in the step config; references like {{input.email}} are rendered at run time.',
    tags: ['email', 'notify'],
    config: { to: '{{input.email}}', subject: '{{input.subject}}', text: '{{input.text}}' },
  },
} satisfies ActionDeclaration<'send_email', typeof emailSchema, typeof emailResultSchema>;
