/**
 * Each user's webhook signing secret (Standard Webhooks form `whsec_<base64 of 32 random bytes>`), kept on the user
 * document. It must be stored as it is, not hashed: the worker signs every delivery with it (HMAC needs the key).
 * Created on first use — by the secret route or by the first delivery, whichever comes first.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { usersCollection } from './users';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export interface WebhookSecret {
  secret: string;
  created_at: Date;
}

function newSecret(): WebhookSecret {
  return { secret: `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`, created_at: new Date() };
}

/** The user's secret, created when it has none. Null for an unknown user. */
export async function ensureWebhookSecret(db: Db, userId: string): Promise<WebhookSecret | null> {
  // Only a user without a secret gets one: of concurrent first uses exactly one write matches, and all read it back.
  await usersCollection(db).updateOne(
    { _id: userId, webhook_secret: { $exists: false } },
    { $set: { webhook_secret: newSecret() } },
  );
  const user = await usersCollection(db).findOne({ _id: userId }, { projection: { webhook_secret: 1 } });
  return user?.webhook_secret ?? null;
}

/** Replaces the user's secret; deliveries still being retried sign their next attempts with the new one. */
export async function rotateWebhookSecret(db: Db, userId: string): Promise<WebhookSecret | null> {
  const next = newSecret();
  const res = await usersCollection(db).updateOne({ _id: userId }, { $set: { webhook_secret: next } });
  return res.matchedCount === 1 ? next : null;
}
