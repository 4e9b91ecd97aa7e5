/** The webhook signing secret as the secret routes answer it. */
import { z } from 'zod';
import type { WebhookSecret } from '../../db/webhook-secrets';
import { iso, isoTimestamp } from './common';

export const webhookSecretView = z
  .strictObject({
    secret: z.string().meta({
      description:
        'Signs your completion webhooks (`whsec_` + base64 of 32 bytes; the HMAC key is the decoded bytes). ' +
        'See docs/webhooks.md for verifying a delivery.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
    created_at: isoTimestamp.meta({ description: 'When this secret was created (rotation replaces it).' }),
  })
  .meta({ id: 'WebhookSecret' });

export function presentWebhookSecret(s: WebhookSecret): z.infer<typeof webhookSecretView> {
  return { secret: s.secret, created_at: iso(s.created_at) };
}
