/**
 * Each user's webhook signing secret (Standard Webhooks form `whsec_<base64 of 32 random bytes>`), kept on the user
 * document. It must be stored as it is, not hashed: the worker signs every delivery with it (HMAC needs the key).
 * Made with the user (db/users.ts createUser), so reading it writes nothing; a user document without one (made by
 * hand) gets one at its first delivery or rotation.
 */
import type { Db } from 'mongodb';
import { newWebhookSecret, usersCollection, type WebhookSecret } from './users';

export type { WebhookSecret };

/** The user's secret, created when it has none. Null for an unknown user. */
export async function ensureWebhookSecret(db: Db, userId: string): Promise<WebhookSecret | null> {
  // Only a user without a secret gets one: of concurrent first uses exactly one write matches, and all read it back.
  await usersCollection(db).updateOne(
    { _id: userId, webhook_secret: { $exists: false } },
    { $set: { webhook_secret: newWebhookSecret() } },
  );
  const user = await usersCollection(db).findOne({ _id: userId }, { projection: { webhook_secret: 1 } });
  return user?.webhook_secret ?? null;
}

/** The user's secret; null for an unknown user or one that has none yet. */
export async function readWebhookSecret(db: Db, userId: string): Promise<WebhookSecret | null> {
  const user = await usersCollection(db).findOne({ _id: userId }, { projection: { webhook_secret: 1 } });
  return user?.webhook_secret ?? null;
}

/** Replaces the user's secret; deliveries still being retried sign their next attempts with the new one. */
export async function rotateWebhookSecret(db: Db, userId: string): Promise<WebhookSecret | null> {
  const next = newWebhookSecret();
  const res = await usersCollection(db).updateOne({ _id: userId }, { $set: { webhook_secret: next } });
  return res.matchedCount === 1 ? next : null;
}
