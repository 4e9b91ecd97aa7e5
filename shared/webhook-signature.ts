/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the signed content is `<id>.<timestamp>.<body>`, the
 * key is the secret's bytes (the base64 after `whsec_`), and the header value is `v1,<base64 HMAC-SHA256>`.
 */
import { createHmac } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../db/users';

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}
