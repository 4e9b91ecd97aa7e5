/**
 * Verifies a Standard Webhooks signature on an inbound delivery (https://www.standardwebhooks.com): headers
 * `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature` (one or more space-separated `v1,<base64>`),
 * signed content `<id>.<timestamp>.<raw body>`, HMAC-SHA256 with the secret's bytes. A timestamp outside the tolerance
 * is refused whatever the signature, so a captured delivery cannot be replayed later; within it, the signed message
 * id is the delivery's only idempotency key (api/routes/hooks.ts), so a replay starts no second run.
 */
import { timingSafeEqual } from 'node:crypto';
import { signWebhook } from '../../shared/webhook-signature';

export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export interface SignedHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

export type Verdict = { ok: true } | { ok: false; problem: string };

export function verifyHookSignature(secret: string, headers: SignedHeaders, rawBody: string, nowMs: number): Verdict {
  if (!headers.id || !headers.timestamp || !headers.signature) {
    return { ok: false, problem: 'webhook-id, webhook-timestamp and webhook-signature headers are required' };
  }
  if (!/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, problem: 'webhook-timestamp: unix seconds' };
  const skew = Math.abs(nowMs / 1000 - Number(headers.timestamp));
  if (skew > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, problem: `webhook-timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} s from now` };
  }
  const expected = Buffer.from(signWebhook(secret, headers.id, Number(headers.timestamp), rawBody));
  const matches = headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true } : { ok: false, problem: 'webhook-signature does not match' };
}
