/**
 * Tokens each user's model calls used per UTC day, counted once per call however often the call's activity is retried,
 * at a cost per call that does not grow with the day's calls (a million calls a day for one owner is an ordinary day).
 *
 * Two collections:
 * - `usage_calls`: one small document per model call, `_id` = owner + call key (`<run_id>:<step_id>:<seq>`, the same
 *   for every attempt of the call). It is the record that the call happened and which day it counts on (the day of its
 *   first attempt, so a retry after midnight does not count it on the next day too). Expired by TTL a week after
 *   that day: the daily budget only needs today's.
 * - `usage`: one document per (owner, day) holding the day's total, read by `_id` before every model call. Besides the
 *   total it holds `pending`: the keys of calls whose tokens are in the total but whose call document does not say so
 *   yet. Keys leave it as soon as their call document does, so it holds at most the calls in the middle of being
 *   counted, never the day's calls.
 *
 * Why this order (no transactions: the embedded server has none, and unique `_id`s are enough). A call is counted in
 * four single-document writes, each of them atomic:
 * 1. claim: the call's document is upserted `pending` (an existing one is returned: a retry).
 * 2. add: the day's total grows by the call's tokens *and* the key joins `pending`, only if the key is not there.
 * 3. the call's document becomes `counted`.
 * 4. the key leaves `pending`.
 * A retry that finds its call `counted` only repeats 4: counted once. One that finds it `pending` repeats 2–4, and 2 is a
 * no-op when the earlier attempt got as far as 2 (its key is still in `pending`, because 4 happens only after 3). So
 * an attempt that stops after any write is completed by the next, and none counts twice. The one order this does not
 * decide is two attempts of one call running at the same time, interleaved within a few milliseconds (a retry racing
 * the attempt Temporal gave up on while it was between its writes); the call's own writes are ordered the same way
 * (db/transcripts.ts refuses the older attempt), and its usage would then count once more, never less.
 *
 * The alternative of keeping every key in the day's document (as before) made each call cost more than the last and
 * hit the 16 MB document limit at about 250 000 calls a day; the alternative of summing the call documents made the
 * read before every call cost as much as the day's calls.
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
  /** Model calls counted on the day (not `calls`: that was the array of keys days used to keep). */
  call_count: number;
  /** Keys of calls counted in `tokens` whose call document is not yet `counted` (a handful at most). */
  pending: string[];
  /** Days are kept a week past their end, then removed by TTL. */
  expires_at: Date;
}

/** One model call, as counted. */
export interface UsageCallDoc {
  /** `<owner_id>:<call key>`. */
  _id: string;
  owner_id: string;
  /** The UTC day the call counts on (its first attempt's). */
  day: string;
  tokens: number;
  state: 'pending' | 'counted';
  expires_at: Date;
}

const KEEP_DAYS = 8;

export function usageCollection(db: Db) {
  return db.collection<UsageDoc>('usage');
}

export function usageCallsCollection(db: Db) {
  return db.collection<UsageCallDoc>('usage_calls');
}

/** The UTC day of `at` as `YYYY-MM-DD`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function docId(ownerId: string, day: string): string {
  return `${ownerId}:${day}`;
}

function expiryOf(day: string): Date {
  const expires = new Date(`${day}T00:00:00.000Z`);
  expires.setUTCDate(expires.getUTCDate() + KEEP_DAYS);
  return expires;
}

/** Tokens the owner's model calls have used on the UTC day of `at` (0 when none). */
export async function tokensUsedOn(db: Db, ownerId: string, at: Date): Promise<number> {
  const doc = await usageCollection(db).findOne({ _id: docId(ownerId, utcDay(at)) }, { projection: { tokens: 1 } });
  return doc?.tokens ?? 0;
}

/**
 * Counts one model call's tokens on the day of `at` (of its first attempt, for a retry); returns false when an
 * earlier attempt of this call key already counted it. Four writes, each by `_id` on a small document (header).
 */
export async function addCallTokens(
  db: Db,
  args: { ownerId: string; callKey: string; tokens: number; at: Date },
): Promise<boolean> {
  const call = await claimCall(db, args);
  if (call.state === 'counted') {
    // An earlier attempt may have stopped between 3 and 4: its key leaves `pending` now (a no-op when it has left).
    await leavePending(db, call, args.callKey);
    return false;
  }
  const added = await addToDay(db, call, args.callKey);
  await usageCallsCollection(db).updateOne({ _id: call._id }, { $set: { state: 'counted' } });
  await leavePending(db, call, args.callKey);
  return added;
}

async function leavePending(db: Db, call: UsageCallDoc, callKey: string): Promise<void> {
  await usageCollection(db).updateOne({ _id: docId(call.owner_id, call.day) }, { $pull: { pending: callKey } });
}

/** The call's document: this attempt's (new, `pending`) or the one an earlier attempt wrote. */
async function claimCall(
  db: Db,
  args: { ownerId: string; callKey: string; tokens: number; at: Date },
): Promise<UsageCallDoc> {
  const day = utcDay(args.at);
  const fresh: UsageCallDoc = {
    _id: `${args.ownerId}:${args.callKey}`,
    owner_id: args.ownerId,
    day,
    tokens: args.tokens,
    state: 'pending',
    expires_at: expiryOf(day),
  };
  const { _id, ...rest } = fresh;
  try {
    const before = await usageCallsCollection(db).findOneAndUpdate(
      { _id },
      { $setOnInsert: rest },
      { upsert: true, returnDocument: 'before' },
    );
    return before ?? fresh;
  } catch (err) {
    // Two attempts upserting at once: one inserted, the other's insert collided; read what the first wrote.
    if (!isDuplicateKey(err)) throw err;
    const existing = await usageCallsCollection(db).findOne({ _id });
    if (!existing) throw err;
    return existing;
  }
}

/** The day's total grows by the call's tokens unless an earlier attempt already added them (its key is pending). */
async function addToDay(db: Db, call: UsageCallDoc, callKey: string): Promise<boolean> {
  try {
    const res = await usageCollection(db).updateOne(
      { _id: docId(call.owner_id, call.day), pending: { $ne: callKey } },
      {
        $inc: { tokens: call.tokens, call_count: 1 },
        $push: { pending: callKey },
        $setOnInsert: { owner_id: call.owner_id, day: call.day, expires_at: expiryOf(call.day) },
      },
      { upsert: true },
    );
    return res.modifiedCount + res.upsertedCount === 1;
  } catch (err) {
    // The day's document exists and holds the key: the upsert's insert collides on _id. Added already.
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}
