/**
 * `run_events`: the append-only log a run's event stream is read from (GET …/runs/:runId/events). One document per
 * seq, `_id` = `<run id>/<seq, 9 digits>`; seq starts at 1 per run and has no gaps.
 *
 * Without transactions or change streams (the embedded server, a standalone mongod), the log's guarantees come from
 * one atomic counter and unique keys:
 * - **Ordering.** A writer allocates its seqs first, with `$inc` on the run's `event_seq` — usually in the very write
 *   that records the change (db/step-states.ts, db/run-end.ts), so a logged change costs one insert more — then inserts at them. Every
 *   allocated seq gets exactly one document: the event, or a `skip` placeholder when there is nothing to log after
 *   all (the happening was logged before). Readers deliver only a gap-free prefix 1..n in seq order and resume after
 *   the last id delivered (`Last-Event-ID`): nothing is skipped that appears later, nothing repeated. Concurrent
 *   writers (a map's items) never collide: each has its own seqs.
 * - **A writer that stopped between the two** (a crash) leaves a hole. Readers write nothing (every GET is
 *   read-only): a reader steps over a hole once it is HOLE_MS old, and a writer never inserts at a seq it allocated
 *   WRITE_WINDOW_MS ago or more — it puts a `skip` there itself and allocates another. A writer late for its seqs
 *   thus logs its event after every hole a reader may have stepped over, so nothing is skipped that appears later,
 *   and a hole delays readers, never stops them.
 * - **Idempotence.** Every event has a key naming what happened (`emails[3]:completed`, `draft:started:2`), unique
 *   per run, so a retried activity or a replayed projection write logs its event once.
 * - **Waking readers.** A reader polls the counter (a lookup of the run by `_id`) and fetches up to it by ids.
 * - **The end.** `run.ended` is the last event readers deliver: they stop there, so an event a straggling writer
 *   appends after it is never shown to anyone (all readers agree), and the run document already has the truth.
 * - **Live text expires.** An agent's live text (`agent.text.delta`, `agent.text.void`: db/text-deltas.ts) is logged
 *   like any event, with an `expires_at` that only those carry: a TTL index removes them after
 *   STREAM_DELTAS_RETENTION_HOURS, leaving holes. A hole with a later event written HOLE_MS ago is at least that
 *   old (its seq was allocated first), so readers step over it at once instead of waiting there (readRunEventWindow).
 * - **An end never logged.** A run whose terminal write happened but whose `run.ended` insert did not (the writer
 *   stopped between the two, and its retry never came) is ended for readers all the same: they deliver `run.ended`
 *   built from the run's document (endedEventOf), as the writer would have.
 */
import type { Db } from 'mongodb';
import type { JsonObject } from '../domain/json';
import type { RunStatus, Usage } from '../domain/run';
import { duplicateKeyIndexes, isDuplicateKey } from './duplicate-key';
import { runsCollection } from './runs';

export const RUN_EVENT_TYPES = [
  'step.started',
  'step.retrying',
  'step.waiting',
  'step.resumed',
  'step.completed',
  'step.failed',
  'step.skipped',
  'step.child_run',
  'step.warning',
  'agent.model_call',
  'agent.tool_call',
  'agent.text.delta',
  'agent.text.void',
  'run.ended',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** A seq that holds no event (nothing to log after all, or its writer came too late for it): never delivered. */
export const SKIP = 'skip';

export interface RunEventDoc {
  _id: string;
  run_id: string;
  seq: number;
  /** `<run id>/<what happened>`: unique, so the same happening is logged once. */
  key: string;
  type: RunEventType | typeof SKIP;
  at: Date;
  /** The event's fields as JSON text: outputs may hold keys MongoDB refuses (`$…`, dotted). */
  data_json: string;
  /** Only on live text: when the TTL index removes it. */
  expires_at?: Date;
}

/** The `run.ended` event's fields: the run's final state, so a reader needs nothing else. */
export interface RunEndedData {
  status: RunStatus;
  error: JsonObject | null;
  usage: Usage;
  steps: { id: string; status: string }[];
}

/** An event a reader delivers (every document but a skip). */
export type LoggedRunEvent = RunEventDoc & { type: RunEventType };

export function isLoggedEvent(doc: RunEventDoc): doc is LoggedRunEvent {
  return doc.type !== SKIP;
}

export function runEventsCollection(db: Db) {
  return db.collection<RunEventDoc>('run_events');
}

export function runEventId(runId: string, seq: number): string {
  return `${runId}/${String(seq).padStart(9, '0')}`;
}

const END_KEY = 'run.ended';
/** How old a hole is when readers step over it (a writer needs milliseconds between allocating and inserting). */
export const HOLE_MS = 10_000;
/**
 * A writer inserts at seqs it allocated less than this long ago, else it skips them and allocates again: half of
 * HOLE_MS, so a writer's clock running a little behind a reader's, or a pause between the check and the insert,
 * still lands before any reader steps over the seq.
 */
export const WRITE_WINDOW_MS = HOLE_MS / 2;
/** A writer whose seqs were taken or went stale allocates again; this bounds how often. */
const MAX_REALLOCATIONS = 5;

/**
 * Seqs a writer allocated (in its own write, or allocateEventSeqs): the first, and when, by the writer's clock taken
 * before the allocating write was sent (so never later than the allocation).
 */
export interface SeqGrant {
  first: number;
  at: number;
}

/** The grant of `count` seqs from a write that `$inc`-ed the counter and returned the document as it was before. */
export function grantFrom(before: { event_seq?: number }, at: number): SeqGrant {
  return { first: (before.event_seq ?? 0) + 1, at };
}

export interface NewRunEvent {
  type: RunEventType;
  /** What happened, unique within the run (the idempotency key of the event). */
  key: string;
  data: JsonObject;
  /** Removed by the TTL index at this time (live text only; every other event is kept for good). */
  expiresAt?: Date;
}

/** Allocates `count` seqs of the run's log. */
export async function allocateEventSeqs(db: Db, runId: string, count: number): Promise<SeqGrant> {
  const at = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId },
    { $inc: { event_seq: count } },
    { returnDocument: 'before', projection: { event_seq: 1 } },
  );
  return grantFrom(before ?? {}, at);
}

/** Whether seqs of this grant may still be written (WRITE_WINDOW_MS). */
function fresh(grant: SeqGrant): boolean {
  return Date.now() - grant.at < WRITE_WINDOW_MS;
}

/**
 * Appends an event unless one with the same key exists; returns its seq, or null when it was logged before. Never
 * throws over a lost race: only a database failure escapes. (An event appended after `run.ended` is never delivered:
 * readers stop at the end.)
 */
export async function appendRunEvent(db: Db, runId: string, event: NewRunEvent): Promise<number | null> {
  return (await appendRunEvents(db, runId, [event]))[0] ?? null;
}

/**
 * Appends events in order at the seqs of `grant` when the caller allocated them (in its own write), else at seqs
 * allocated here. Each seq gets its event, or a `skip` when the event was logged before (null then). Seqs granted
 * too long ago (WRITE_WINDOW_MS) get skips, and the events go to new ones.
 */
export async function appendRunEvents(
  db: Db,
  runId: string,
  batch: NewRunEvent[],
  grant?: SeqGrant,
): Promise<(number | null)[]> {
  if (batch.length === 0) return [];
  let seqs = grant ?? (await allocateEventSeqs(db, runId, batch.length));
  if (!fresh(seqs)) {
    await fillEventSeqs(db, runId, seqs.first, batch.length);
    seqs = await allocateEventSeqs(db, runId, batch.length);
  }
  const first = seqs.first;
  if (batch.length === 1) return [await insertEvent(db, runId, batch[0]!, seqs)];
  // Several events (a step's start and completion at once): one round trip in the usual case, where every seq and
  // key is free; an event that collided goes the one-by-one way, which tells a repeat from a filled seq.
  const collided = await insertAll(db, runId, batch, first);
  const out: (number | null)[] = [];
  for (const [i, event] of batch.entries()) {
    out.push(collided.has(i) ? await insertEvent(db, runId, event, { first: first + i, at: seqs.at }) : first + i);
  }
  return out;
}

/** Inserts the batch at its seqs, unordered; the indexes of the events that hit a duplicate key. */
async function insertAll(db: Db, runId: string, batch: NewRunEvent[], first: number): Promise<Set<number>> {
  const at = new Date();
  const docs = batch.map((event, i) => eventDoc(runId, first + i, event, at));
  try {
    await runEventsCollection(db).insertMany(docs, { ordered: false });
    return new Set();
  } catch (err) {
    const collided = duplicateKeyIndexes(err);
    if (!collided) throw err;
    return collided;
  }
}

/** The document of an event at its seq. */
function eventDoc(runId: string, seq: number, event: NewRunEvent, at: Date): RunEventDoc {
  return {
    _id: runEventId(runId, seq),
    run_id: runId,
    seq,
    key: `${runId}/${event.key}`,
    type: event.type,
    at,
    data_json: JSON.stringify(event.data),
    ...(event.expiresAt ? { expires_at: event.expiresAt } : {}),
  };
}

/** The `skip` document of a seq that holds no event. */
function skipDoc(runId: string, seq: number, at: Date): RunEventDoc {
  return {
    _id: runEventId(runId, seq),
    run_id: runId,
    seq,
    key: `${runId}/~${SKIP}/${seq}`,
    type: SKIP,
    at,
    data_json: '{}',
  };
}

/** Puts a `skip` at `seq` unless something is there (a seq its writer had nothing for); true when this call filled it. */
export async function fillEventSeq(db: Db, runId: string, seq: number): Promise<boolean> {
  try {
    await runEventsCollection(db).insertOne(skipDoc(runId, seq, new Date()));
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/** Puts a `skip` at each of `count` seqs from `from` unless something is there (seqs allocated for nothing to log). */
export async function fillEventSeqs(db: Db, runId: string, from: number, count: number): Promise<void> {
  if (count <= 1) {
    if (count === 1) await fillEventSeq(db, runId, from);
    return;
  }
  const at = new Date();
  const docs = Array.from({ length: count }, (_, i) => skipDoc(runId, from + i, at));
  try {
    await runEventsCollection(db).insertMany(docs, { ordered: false });
  } catch (err) {
    // A seq filled before (a retried writer) already holds its skip.
    if (!duplicateKeyIndexes(err)) throw err;
  }
}

async function insertEvent(db: Db, runId: string, event: NewRunEvent, granted: SeqGrant): Promise<number | null> {
  const events = runEventsCollection(db);
  const key = `${runId}/${event.key}`;
  let seq = granted;
  for (let tries = 0; ; tries++) {
    if (fresh(seq)) {
      try {
        await events.insertOne(eventDoc(runId, seq.first, event, new Date()));
        return seq.first;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      // Either the key is taken (logged before: this seq gets a skip) or the seq is (filled: take another).
      if (await events.findOne({ key }, { projection: { _id: 1 } })) {
        await fillEventSeq(db, runId, seq.first);
        return null;
      }
    } else {
      // Too late for this seq: readers may have stepped over it already.
      await fillEventSeq(db, runId, seq.first);
    }
    if (tries >= MAX_REALLOCATIONS) {
      throw new Error(`could not append an event to run ${runId}: ${tries + 1} seqs were taken or stale`);
    }
    seq = await allocateEventSeqs(db, runId, 1);
  }
}

/** Logs the run's end from its (terminal) document: the workflow's outcome, the reconciler and readers all come here. */
export async function appendRunEnded(
  db: Db,
  runId: string,
  data: RunEndedData,
  grant?: SeqGrant,
): Promise<number | null> {
  return (await appendRunEvents(db, runId, [runEndedEvent(data)], grant))[0] ?? null;
}

/** Whether the run's `run.ended` is in its log (one lookup on the unique key). */
export async function endLogged(db: Db, runId: string): Promise<boolean> {
  return (await runEventsCollection(db).findOne({ key: `${runId}/${END_KEY}` }, { projection: { _id: 1 } })) !== null;
}

/** The run's `run.ended` event (for a writer that appends it with others). */
export function runEndedEvent(data: RunEndedData): NewRunEvent {
  return { type: 'run.ended', key: END_KEY, data: data as unknown as JsonObject };
}

/** A read of the log: its gap-free run, and the first document past the hole that ends it (when one was read). */
export interface RunEventWindow {
  events: RunEventDoc[];
  beyondHole?: { seq: number; at: Date };
}

/**
 * What is logged after `afterSeq`, in order, at most `limit`, up to the run's counter: the gap-free run of documents
 * from afterSeq + 1 (skips included: the caller steps over them), and the first document read past a hole (how old
 * the hole is at least). Lookups by `_id` only: every supported server answers them from its primary index.
 */
export async function readRunEventWindow(
  db: Db,
  runId: string,
  range: { afterSeq: number; counter: number; limit: number },
): Promise<RunEventWindow> {
  const { afterSeq } = range;
  const last = Math.min(range.counter, afterSeq + range.limit);
  if (last <= afterSeq) return { events: [] };
  const ids: string[] = [];
  for (let seq = afterSeq + 1; seq <= last; seq++) ids.push(runEventId(runId, seq));
  const docs = await runEventsCollection(db)
    .find({ _id: { $in: ids } })
    .sort({ _id: 1 })
    .toArray();
  // Only a gap-free run from afterSeq + 1 counts (later ones wait for the hole before them).
  const out: RunEventDoc[] = [];
  for (const doc of docs) {
    if (doc.seq !== afterSeq + out.length + 1) return { events: out, beyondHole: { seq: doc.seq, at: doc.at } };
    out.push(doc);
  }
  return { events: out };
}

/**
 * The first document after `afterSeq` up to the counter (a range over `_id`, one document): past a hole wider than a
 * read (a long stretch of expired live text).
 */
export async function firstEventAfter(
  db: Db,
  runId: string,
  afterSeq: number,
  counter: number,
): Promise<{ seq: number; at: Date } | null> {
  const doc = await runEventsCollection(db).findOne(
    { _id: { $gt: runEventId(runId, afterSeq), $lte: runEventId(runId, counter) } },
    { sort: { _id: 1 }, projection: { seq: 1, at: 1 } },
  );
  return doc ? { seq: doc.seq, at: doc.at } : null;
}

/** The run's event counter and stored status (the one read an open stream makes while nothing happens). */
export async function readEventCounter(db: Db, runId: string): Promise<{ counter: number; status: RunStatus } | null> {
  const doc = await runsCollection(db).findOne({ _id: runId }, { projection: { event_seq: 1, status: 1 } });
  return doc ? { counter: doc.event_seq ?? 0, status: doc.status } : null;
}
