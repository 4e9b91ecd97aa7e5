/** OpenAPI paths of the webhook signing secret. */
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { webhookSecretView } from '../presenters/webhook-secret';

const tags = ['webhooks'];

export const webhooksPaths: ZodOpenApiPathsObject = {
  '/api/v1/webhooks/secret': {
    get: {
      tags,
      summary: 'Your webhook signing secret (made with your user)',
      description:
        'Completion webhooks (`callback_url` on a run start or in a workflow config) are signed with it in the ' +
        'Standard Webhooks form: `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`.',
      security: BEARER,
      responses: { ...ok(200, 'The secret', webhookSecretView), ...errors(401, 404) },
    },
  },
  '/api/v1/webhooks/secret/rotate': {
    post: {
      tags,
      summary: 'Replace your webhook signing secret',
      description: 'Deliveries still being retried sign their next attempts with the new secret.',
      security: BEARER,
      responses: { ...ok(200, 'The new secret', webhookSecretView), ...errors(401) },
    },
  },
};
