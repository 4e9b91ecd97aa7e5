/** A run's webhook deliveries as the status body shows them (the `webhooks` field of RunStatus). */
import { z } from 'zod';
import type { WebhookDeliveryDoc } from '../../db/webhook-deliveries';
import { iso, isoTimestamp } from './time';

export const webhookDeliveryView = z
  .strictObject({
    delivery_id: z.string().meta({ description: 'The `webhook-id` header: the same on every attempt.' }),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']).meta({
      description: '`delivered` after a 2xx answer; `failed` once the attempts are used up or the URL is refused.',
    }),
    attempts: z.array(
      z.strictObject({
        attempt: z.number().int(),
        at: isoTimestamp,
        status_code: z.number().int().nullable().meta({ description: "The receiver's HTTP status, if it answered." }),
        error: z
          .strictObject({ reason: z.string(), message: z.string() })
          .nullable()
          .meta({ description: 'Why the attempt failed (e.g. `url_refused`, `timeout`, `http_status`).' }),
      }),
    ),
  })
  .meta({ id: 'WebhookDelivery' });

export type WebhookDeliveryView = z.infer<typeof webhookDeliveryView>;

export function presentWebhookDelivery(doc: WebhookDeliveryDoc): WebhookDeliveryView {
  return {
    delivery_id: doc._id,
    url: doc.url,
    status: doc.status,
    attempts: [...doc.attempts]
      .sort((a, b) => a.attempt - b.attempt)
      .map((a) => ({ attempt: a.attempt, at: iso(a.at), status_code: a.status_code, error: a.error })),
  };
}
