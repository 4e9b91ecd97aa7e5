/**
 * Idempotency keys of run starts. A key is claimed by inserting a document whose `_id` is derived from owner + key:
 * the `_id` index is unique on every MongoDB-compatible server (partial unique indexes are not: the embedded test
 * server ignores their filter), so of N concurrent requests exactly one claim succeeds.
 */
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

export interface IdempotencyDoc {
  _id: string;
  owner_id: string;
  run_id: string;
  /** SHA-256 of the canonical request (workflow id + body). */
  request_hash: string;
  created_at: Date;
  /** TTL: after this the key may be used for a new run (db/indexes.ts). */
  expires_at: Date;
}

/** How long a key stays bound to its run. */
export const IDEMPOTENCY_KEY_TTL_SECONDS = 7 * 24 * 3600;

export function idempotencyCollection(db: Db) {
  return db.collection<IdempotencyDoc>('idempotency_keys');
}

function claimId(ownerId: string, key: string): string {
  return `${ownerId}:${createHash('sha256').update(key).digest('base64url')}`;
}

export async function findClaim(db: Db, ownerId: string, key: string): Promise<IdempotencyDoc | null> {
  return idempotencyCollection(db).findOne({ _id: claimId(ownerId, key) });
}

/** Claims the key for `runId`; returns the existing claim when another request holds it. */
export async function claimKey(
  db: Db,
  args: { ownerId: string; key: string; runId: string; requestHash: string; now?: Date },
): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyDoc | null }> {
  const now = args.now ?? new Date();
  const doc: IdempotencyDoc = {
    _id: claimId(args.ownerId, args.key),
    owner_id: args.ownerId,
    run_id: args.runId,
    request_hash: args.requestHash,
    created_at: now,
    expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_SECONDS * 1000),
  };
  try {
    await idempotencyCollection(db).insertOne(doc);
    return { claimed: true };
  } catch (err) {
    if (isDuplicateKey(err)) {
      return { claimed: false, existing: await findClaim(db, args.ownerId, args.key) };
    }
    throw err;
  }
}

/** Gives the key up again (the start it was claimed for failed); only the claim of that run is removed. */
export async function releaseKey(db: Db, ownerId: string, key: string, runId: string): Promise<void> {
  await idempotencyCollection(db).deleteOne({ _id: claimId(ownerId, key), run_id: runId });
}
