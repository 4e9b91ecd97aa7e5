/**
 * Tokens each user's model calls used per UTC day, counted once per call however often the call's activity is retried,
 * at a cost per call that does not grow with the day's calls (a million calls a day for one owner is an ordinary day),
 * in two writes one after the other — the first beside the answer's transcript entry, the second beside its events.
 *
 * Two collections:
 * - `usage`: one document per (owner, day). The day's total (read by `_id` before every model call, against the daily
 *   budget), the same totals by group (model × agent template × workflow: what `GET /api/v1/usage` shows, kept
 *   for a year and a month), and `pending`: a map whose fields are the hashed keys of calls counted in the totals whose
 *   call document may not exist yet. A field leaves it in a later add of the same worker once the call's document
 *   has landed, so it holds the calls in the middle of being counted, never the day's calls.
 * - `usage_calls`: one small document per counted call, `_id` = owner + call key (`<run_id>:<step_id>:<seq>`, the same
 *   for every attempt of the call), written after the add: the lasting record that the call was counted, and its
 *   thread (threads are too many to be groups of the day's document). Expired by TTL a week after its day.
 *
 * Why this is exactly once (no transactions: the embedded server has none; each write is atomic on one document):
 * 1. add: the day's totals grow by the call's tokens and the key joins `pending`, only if the key is not there (one
 *    `updateOne` by `_id` with `pending.<key>: {$exists: false}`).
 * 2. record: the call's document is inserted (a duplicate means an earlier attempt inserted it).
 * 3. later: the key leaves `pending` with the next add this worker sends to the same day (`$unset`), only once 2 has
 *    landed. A key left behind by a worker that stopped is harmless (it says "counted") and goes with its day.
 * The first attempt of a call (Temporal's attempt 1: the workflow schedules each call key once) adds without looking:
 * no earlier attempt can have written anything. A retry first reads the call's document (sent with the model call, so
 * it costs no time after it): present, the call was counted; absent, the earlier attempt stopped before 2, so its key,
 * if it added, is still in `pending` (3 waits for 2), and this attempt's add is a no-op. So an attempt stopped after any
 * write is completed by the next, and none counts twice. The one order this does not decide is two attempts of one
 * call running at the same time within a few milliseconds (a retry racing the attempt Temporal gave up on); the call's
 * own writes are ordered the same way (db/transcripts.ts refuses the older attempt), and its usage would then count
 * once more, never less.
 *
 * Every attempt counts on one day: the day the call's activity was first scheduled (Temporal's
 * `scheduledTimestampMs`, the same for every attempt), so a retry after midnight does not count it on the next day.
 */
import { createHash } from 'node:crypto';
import type { Db, Filter, UpdateFilter } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { runsCollection } from './runs';
import { innerExecution } from './step-writes';

/** Totals of one group of a day: the calls of one model, agent template and workflow. */
export interface UsageGroup {
  model: string;
  /** The agent template of the step; null when the run no longer names it. */
  template_id: string | null;
  workflow_id: string | null;
  input_tokens: number;
  output_tokens: number;
  calls: number;
}

export interface UsageDoc {
  /** `<owner_id>:<YYYY-MM-DD>`. */
  _id: string;
  owner_id: string;
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Input and output tokens together: what the daily budget counts. */
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  /** Model calls counted on the day. */
  call_count: number;
  /** By a hash of (model, template, workflow): bounded by what the owner runs, not by the number of calls. */
  groups: Record<string, UsageGroup>;
  /** Hashed keys of calls in the totals whose call document may not exist yet (a handful per worker at most). */
  pending: Record<string, true>;
  /** Days are kept a year and a month (the usage view's reach), then removed by TTL. */
  expires_at: Date;
}

/** One model call, as counted. */
export interface UsageCallDoc {
  /** `<owner_id>:<call key>`. */
  _id: string;
  owner_id: string;
  /** The UTC day the call counts on. */
  day: string;
  run_id: string;
  model: string;
  template_id: string | null;
  workflow_id: string | null;
  /** The run's thread, when it belongs to one. */
  thread_id?: string;
  input_tokens: number;
  output_tokens: number;
  expires_at: Date;
}

/** Where a call was made: what its usage is grouped by besides its model and day (read from the run). */
export interface CallOrigin {
  run_id: string;
  template_id: string | null;
  workflow_id: string | null;
  thread_id?: string;
}

/** One model call to count. */
export interface CountedCall {
  ownerId: string;
  /** `<run_id>:<step_id>:<seq>`: the same for every attempt of the call. */
  callKey: string;
  /** When the call's activity was first scheduled (the same for every attempt): the call counts on its UTC day. */
  at: Date;
  model: string;
  origin: CallOrigin;
  input_tokens: number;
  output_tokens: number;
}

/** Days are kept this long: the usage view reaches back a year and a month. */
export const USAGE_DAY_KEEP_DAYS = 400;
/** Call documents are kept this long: long enough for any retry; threads are shown for these days. */
export const USAGE_CALL_KEEP_DAYS = 8;
/** At most this many settled keys leave `pending` with one add (the rest with the next). */
const UNSET_PER_ADD = 64;

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

export function usageDayId(ownerId: string, day: string): string {
  return `${ownerId}:${day}`;
}

function expiryOf(day: string, keepDays: number): Date {
  const expires = new Date(`${day}T00:00:00.000Z`);
  expires.setUTCDate(expires.getUTCDate() + keepDays);
  return expires;
}

/** A field name for `value` (call keys and model names hold dots, which field names may not): 96 bits of SHA-256. */
function fieldOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 16);
}

/** The field of a group in `groups`. */
export function usageGroupField(group: Pick<UsageGroup, 'model' | 'template_id' | 'workflow_id'>): string {
  return fieldOf(JSON.stringify([group.model, group.template_id, group.workflow_id]));
}

/** Tokens the owner's model calls have used on the UTC day of `at` (0 when none). */
export async function tokensUsedOn(db: Db, ownerId: string, at: Date): Promise<number> {
  const doc = await usageCollection(db).findOne(
    { _id: usageDayId(ownerId, utcDay(at)) },
    { projection: { tokens: 1 } },
  );
  return doc?.tokens ?? 0;
}

/**
 * Where the call of `stepId` (a step, map item or loop iteration) is made: the run's workflow and thread and the
 * step's agent template. Sent with the model call, so it costs no time around it. `threadId`: the thread the step
 * answers in — a workflow's agent step in a thread (decision 0603) counts for both its workflow and the thread.
 */
export async function callOrigin(db: Db, runId: string, stepId: string, threadId?: string): Promise<CallOrigin> {
  const run = await runsCollection(db).findOne(
    { _id: runId },
    { projection: { workflow_id: 1, thread_id: 1, 'steps.id': 1, 'steps.template_id': 1 } },
  );
  const id = innerExecution(stepId)?.stepId ?? stepId;
  // `thread_id` is the run's thread (absent on runs outside a thread).
  const thread = threadId ?? (run as { thread_id?: unknown } | null)?.thread_id;
  return {
    run_id: runId,
    workflow_id: run?.workflow_id ?? null,
    template_id: run?.steps?.find((s) => s.id === id)?.template_id ?? null,
    ...(typeof thread === 'string' ? { thread_id: thread } : {}),
  };
}

/**
 * What an earlier attempt of the call left: its call document, or null. Attempt 1 reads nothing (no attempt came
 * before it). Start it with the model call and hand it to countCall.
 */
export async function earlierCount(
  db: Db,
  args: { ownerId: string; callKey: string; attempt: number },
): Promise<UsageCallDoc | null> {
  if (args.attempt <= 1) return null;
  return usageCallsCollection(db).findOne({ _id: `${args.ownerId}:${args.callKey}` });
}

/**
 * Counts one model call (header): returns false when an earlier attempt of this call key already counted it. Two
 * writes in sequence, each by `_id` on a small document; `earlier` is what earlierCount found.
 */
export async function countCall(db: Db, call: CountedCall, earlier: Promise<UsageCallDoc | null>): Promise<boolean> {
  if ((await earlier) !== null) return false;
  const day = utcDay(call.at);
  const added = await addToDay(db, call, day);
  const doc: UsageCallDoc = {
    _id: `${call.ownerId}:${call.callKey}`,
    owner_id: call.ownerId,
    day,
    run_id: call.origin.run_id,
    model: call.model,
    template_id: call.origin.template_id,
    workflow_id: call.origin.workflow_id,
    ...(call.origin.thread_id !== undefined ? { thread_id: call.origin.thread_id } : {}),
    input_tokens: call.input_tokens,
    output_tokens: call.output_tokens,
    expires_at: expiryOf(day, USAGE_CALL_KEEP_DAYS),
  };
  try {
    await usageCallsCollection(db).insertOne(doc);
  } catch (err) {
    // An earlier attempt got as far as this (its answer was lost after it): the document is the same call's.
    if (!isDuplicateKey(err)) throw err;
  }
  settled(db, usageDayId(call.ownerId, day)).add(fieldOf(call.callKey));
  return added;
}

/**
 * Per database (by name: a fact about its documents, whichever client sent the writes) and day document: keys whose
 * call document has landed, to leave `pending` with the next add.
 */
const settledKeys = new Map<string, Map<string, Set<string>>>();

/** Day documents remembered per database (owners × days in use); the oldest is forgotten, its keys left behind. */
const SETTLED_DAYS = 1024;

function settled(db: Db, dayId: string): Set<string> {
  let days = settledKeys.get(db.databaseName);
  if (!days) settledKeys.set(db.databaseName, (days = new Map<string, Set<string>>()));
  let keys = days.get(dayId);
  if (!keys) {
    days.set(dayId, (keys = new Set()));
    if (days.size > SETTLED_DAYS) days.delete(days.keys().next().value!);
  }
  return keys;
}

/** MongoDB's error for a field path through a value that cannot hold it (`pending.<key>` in an array). */
const PATH_NOT_VIABLE = 28;

/**
 * A day counted by the build before this one keeps `pending` as an array of keys (of calls in flight at the upgrade,
 * which a retry across it may count again): it becomes a map, once. True when it was such a day.
 */
async function pendingToMap(db: Db, dayId: string): Promise<boolean> {
  const res = await usageCollection(db).updateOne(
    { _id: dayId, pending: { $type: 'array' } },
    { $set: { pending: {} } },
  );
  return res.modifiedCount === 1;
}

/** The add as one upsert; true when it counted. */
async function addOnce(db: Db, filter: Filter<UsageDoc>, update: UpdateFilter<UsageDoc>): Promise<boolean> {
  try {
    const res = await usageCollection(db).updateOne(filter, update, { upsert: true });
    return res.modifiedCount + res.upsertedCount === 1;
  } catch (err) {
    // The upsert's insert collided on _id: the day's document exists, written by an earlier attempt of this call (its
    // key is pending) or by another call at the same moment. Without the upsert the filter says which.
    if (!isDuplicateKey(err)) throw err;
    return (await usageCollection(db).updateOne(filter, update)).modifiedCount === 1;
  }
}

/** Step 1: the day's totals grow by the call's, unless its key is pending there (an earlier attempt added it). */
async function addToDay(db: Db, call: CountedCall, day: string): Promise<boolean> {
  const dayId = usageDayId(call.ownerId, day);
  const key = `pending.${fieldOf(call.callKey)}`;
  const group = `groups.${usageGroupField({ model: call.model, ...call.origin })}`;
  const leaving = [...settled(db, dayId)].slice(0, UNSET_PER_ADD);
  const filter = { _id: dayId, [key]: { $exists: false } };
  const update = {
    $inc: {
      tokens: call.input_tokens + call.output_tokens,
      input_tokens: call.input_tokens,
      output_tokens: call.output_tokens,
      call_count: 1,
      [`${group}.input_tokens`]: call.input_tokens,
      [`${group}.output_tokens`]: call.output_tokens,
      [`${group}.calls`]: 1,
    },
    $set: {
      [key]: true,
      [`${group}.model`]: call.model,
      [`${group}.template_id`]: call.origin.template_id,
      [`${group}.workflow_id`]: call.origin.workflow_id,
    },
    $setOnInsert: { owner_id: call.ownerId, day, expires_at: expiryOf(day, USAGE_DAY_KEEP_DAYS) },
    ...(leaving.length > 0 ? { $unset: Object.fromEntries(leaving.map((k) => [`pending.${k}`, '' as const])) } : {}),
  };
  let added: boolean;
  try {
    added = await addOnce(db, filter, update);
    // Not added: an earlier attempt's key is pending, or (rarely) the day is one of the build before (below).
    if (!added && (await pendingToMap(db, dayId))) added = await addOnce(db, filter, update);
  } catch (err) {
    if ((err as { code?: unknown }).code !== PATH_NOT_VIABLE || !(await pendingToMap(db, dayId))) throw err;
    added = await addOnce(db, filter, update);
  }
  // Those keys have left (or the document was new and never held them).
  if (added) for (const k of leaving) settled(db, dayId).delete(k);
  return added;
}
