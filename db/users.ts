/** Users and their API keys. A key is stored only as its SHA-256 hash; the plaintext is shown once at creation. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from 'mongodb';
import { newId } from './ids';

export interface UserDoc {
  _id: string;
  name: string;
  created_at: Date;
  /** Signs the user's completion webhooks (db/webhook-secrets.ts); made with the user. */
  webhook_secret?: WebhookSecret;
}

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export interface WebhookSecret {
  secret: string;
  created_at: Date;
}

/** A new webhook signing secret, in the Standard Webhooks form `whsec_<base64 of 32 random bytes>`. */
export function newWebhookSecret(): WebhookSecret {
  return { secret: `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`, created_at: new Date() };
}

export interface ApiKeyDoc {
  _id: string;
  user_id: string;
  /** hex SHA-256 of the full key */
  hash: string;
  /** the first characters of the key, to recognise it in listings (`sk_live_AbCd…`) */
  prefix: string;
  label: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Recognisable prefix; the rest is 32 random bytes (256 bits) in base64url. */
export const API_KEY_PREFIX = 'sw_';
const KEY_SHAPE = /^sw_[A-Za-z0-9_-]{43}$/;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function usersCollection(db: Db) {
  return db.collection<UserDoc>('users');
}
export function apiKeysCollection(db: Db) {
  return db.collection<ApiKeyDoc>('api_keys');
}

export async function createUser(db: Db, name: string): Promise<UserDoc> {
  const user: UserDoc = { _id: newId('usr'), name, created_at: new Date(), webhook_secret: newWebhookSecret() };
  await usersCollection(db).insertOne(user);
  return user;
}

export async function findUserByName(db: Db, name: string): Promise<UserDoc | null> {
  return usersCollection(db).findOne({ name });
}

/** Creates a key for the user and returns the plaintext exactly once. */
export async function createApiKey(
  db: Db,
  userId: string,
  label = 'default',
): Promise<{ key: string; doc: ApiKeyDoc }> {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const doc: ApiKeyDoc = {
    _id: newId('key'),
    user_id: userId,
    hash: hashKey(key),
    prefix: key.slice(0, 8),
    label,
    created_at: new Date(),
    last_used_at: null,
    revoked_at: null,
  };
  await apiKeysCollection(db).insertOne(doc);
  return { key, doc };
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKeyDoc[]> {
  return apiKeysCollection(db).find({ user_id: userId }).sort({ created_at: -1 }).toArray();
}

export async function revokeApiKey(db: Db, keyId: string): Promise<boolean> {
  const res = await apiKeysCollection(db).updateOne(
    { _id: keyId, revoked_at: null },
    { $set: { revoked_at: new Date() } },
  );
  return res.modifiedCount === 1;
}

/** Who a presented key authenticates: enough for every request, without reading the user document. */
export interface KeyIdentity {
  user_id: string;
  key_id: string;
}

/**
 * The identity a presented key stands for, or null (unknown, malformed or revoked). One indexed read by hash: the
 * secret itself is never compared byte by byte, and the final check is constant-time anyway. Users are never
 * deleted, so a live key always names an existing user and the hot path needs no second read.
 */
export async function authenticateKey(db: Db, presented: string): Promise<KeyIdentity | null> {
  if (!KEY_SHAPE.test(presented)) return null;
  const hash = hashKey(presented);
  const key = await apiKeysCollection(db).findOne({ hash, revoked_at: null });
  if (!key || !timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
  // last_used_at is informational: at most one write per key per minute keeps reads cheap.
  const now = new Date();
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() > 60_000) {
    void apiKeysCollection(db)
      .updateOne({ _id: key._id }, { $set: { last_used_at: now } })
      .catch(() => undefined);
  }
  return { user_id: key.user_id, key_id: key._id };
}
