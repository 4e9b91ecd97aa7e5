/**
 * The `usage` collection: tokens each user's model calls used per UTC day, one document per (owner, day). The callModel
 * activity adds each call once, keyed by run/step/transcript seq: a retried attempt of the same call writes the same
 * key, and the conditional update below (key not yet in `calls`) makes the increment and the key one atomic
 * single-document write — no transaction needed, and a crash between two writes cannot count a call twice or lose it.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

export interface UsageDoc {
  /** `<owner_id>:<YYYY-MM-DD>`. */
  _id: string;
  owner_id: string;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  tokens: number;
  /** Keys of the calls already counted (`<run_id>:<step_id>:<seq>`). */
  calls: string[];
  /** Days are kept a week past their end, then removed by TTL. */
  expires_at: Date;
}

const KEEP_DAYS = 8;

export function usageCollection(db: Db) {
  return db.collection<UsageDoc>('usage');
}

/** The UTC day of `at` as `YYYY-MM-DD`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function docId(ownerId: string, day: string): string {
  return `${ownerId}:${day}`;
}

/** Tokens the owner's model calls have used on the UTC day of `at` (0 when none). */
export async function tokensUsedOn(db: Db, ownerId: string, at: Date): Promise<number> {
  const doc = await usageCollection(db).findOne({ _id: docId(ownerId, utcDay(at)) }, { projection: { tokens: 1 } });
  return doc?.tokens ?? 0;
}

/** Counts one model call's tokens on the day of `at`; returns false when this call key was already counted. */
export async function addCallTokens(
  db: Db,
  args: { ownerId: string; callKey: string; tokens: number; at: Date },
): Promise<boolean> {
  const day = utcDay(args.at);
  const expires = new Date(`${day}T00:00:00.000Z`);
  expires.setUTCDate(expires.getUTCDate() + KEEP_DAYS);
  try {
    const res = await usageCollection(db).updateOne(
      { _id: docId(args.ownerId, day), calls: { $ne: args.callKey } },
      {
        $inc: { tokens: args.tokens },
        $push: { calls: args.callKey },
        $setOnInsert: { owner_id: args.ownerId, day, expires_at: expires },
      },
      { upsert: true },
    );
    return res.modifiedCount + res.upsertedCount === 1;
  } catch (err) {
    // The day's document exists and already holds the key: the upsert's insert collides on _id.
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}
