/**
 * `run_events`: the append-only log a run's event stream is read from (GET …/runs/:runId/events). One document per
 * event, `_id` = `<run id>/<seq, 9 digits>`; seq starts at 1 per run and has no gaps.
 *
 * Without transactions or change streams (the embedded server, a standalone mongod), the log's guarantees come from
 * unique keys:
 * - **Ordering.** A writer takes seq = the run's `event_seq` + 1 and inserts; on a duplicate `_id` it tries the next
 *   seq. An insert at seq n succeeds only after n − 1 exists (it was the counter, or it collided), so what a reader
 *   sees is always a prefix 1..n: reading in seq order and resuming after the last id delivered (`Last-Event-ID`)
 *   never skips an event that appears later, and never repeats one.
 * - **Idempotence.** Every event has a key naming what happened (`emails[3]:completed`, `draft:started:2`), unique
 *   per run, so a retried activity or a replayed projection write logs its event once.
 * - **Waking readers.** After the insert the writer raises `runs.event_seq` with `$max`; a reader polls that one
 *   field of the run document (a lookup by `_id`) and fetches events by their ids. A lost `$max` only delays a reader
 *   until the next event, and readers also probe one id past the counter.
 * - **The end.** `run.ended` is the last event readers deliver: they stop there, so an event a straggling writer
 *   appends after it is never shown to anyone (all readers agree), and the run document already has the truth.
 */
import type { Db } from 'mongodb';
import type { JsonObject } from '../temporal/contract/json';
import type { RunStatus, Usage } from '../temporal/contract/run';

export const RUN_EVENT_TYPES = [
  'step.started',
  'step.retrying',
  'step.waiting',
  'step.completed',
  'step.failed',
  'step.skipped',
  'step.child_run',
  'agent.model_call',
  'agent.tool_call',
  'run.ended',
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

export interface RunEventDoc {
  _id: string;
  run_id: string;
  seq: number;
  /** `<run id>/<what happened>`: unique, so the same happening is logged once. */
  key: string;
  type: RunEventType;
  at: Date;
  /** The event's fields as JSON text: outputs may hold keys MongoDB refuses (`$…`, dotted). */
  data_json: string;
}

/** The `run.ended` event's fields: the run's final state, so a reader needs nothing else. */
export interface RunEndedData {
  status: RunStatus;
  error: JsonObject | null;
  usage: Usage;
  steps: { id: string; status: string }[];
}

/** The run document's counter of its last event (a field of `runs`, written with $max). */
function runCounters(db: Db) {
  return db.collection<{ _id: string; event_seq?: number; status: RunStatus }>('runs');
}

export function runEventsCollection(db: Db) {
  return db.collection<RunEventDoc>('run_events');
}

export function runEventId(runId: string, seq: number): string {
  return `${runId}/${String(seq).padStart(9, '0')}`;
}

const END_KEY = 'run.ended';
/** Concurrent writers of one run (a map's items) collide on seq; each collision moves a writer one seq on. */
const MAX_SEQ_TRIES = 200;

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

export interface NewRunEvent {
  type: RunEventType;
  /** What happened, unique within the run (the idempotency key of the event). */
  key: string;
  data: JsonObject;
}

/**
 * Appends an event unless one with the same key exists; returns its seq, or null when it was logged before. Never
 * throws over a lost race: only a database failure escapes. (An event appended after `run.ended` is never delivered:
 * readers stop at the end.) `counter`: the run's `event_seq` when the caller has just read it (a step write returns
 * it); otherwise it is read here. Either is only where the search for a free seq starts.
 */
export async function appendRunEvent(
  db: Db,
  runId: string,
  event: NewRunEvent,
  counter?: number,
): Promise<number | null> {
  return (await appendRunEvents(db, runId, [event], counter))[0] ?? null;
}

/**
 * Appends events in order (each as appendRunEvent does), then raises the run's counter once: what one write did
 * (a pure step's start and completion) costs one counter update.
 */
export async function appendRunEvents(
  db: Db,
  runId: string,
  batch: NewRunEvent[],
  counter?: number,
): Promise<(number | null)[]> {
  const known =
    counter ?? (await runCounters(db).findOne({ _id: runId }, { projection: { event_seq: 1 } }))?.event_seq ?? 0;
  const seqs: (number | null)[] = [];
  let next = known + 1;
  for (const event of batch) {
    const seq = await insertEvent(db, runId, event, next);
    seqs.push(seq);
    if (seq !== null) next = seq + 1;
  }
  const last = Math.max(0, ...seqs.filter((s): s is number => s !== null));
  if (last > 0) await runCounters(db).updateOne({ _id: runId }, { $max: { event_seq: last } });
  return seqs;
}

/** Inserts at the first free seq from `from` on; null when the event's key was logged before. */
async function insertEvent(db: Db, runId: string, event: NewRunEvent, from: number): Promise<number | null> {
  const events = runEventsCollection(db);
  const key = `${runId}/${event.key}`;
  let seq = from;
  for (let tries = 0; tries < MAX_SEQ_TRIES; tries++, seq++) {
    try {
      await events.insertOne({
        _id: runEventId(runId, seq),
        run_id: runId,
        seq,
        key,
        type: event.type,
        at: new Date(),
        data_json: JSON.stringify(event.data),
      });
      return seq;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      if (await events.findOne({ key }, { projection: { _id: 1 } })) return null;
    }
  }
  throw new Error(`could not append an event to run ${runId}: ${MAX_SEQ_TRIES} concurrent writers won first`);
}

/** Logs the run's end from its (terminal) document: the workflow's outcome, read-repair and readers all come here. */
export async function appendRunEnded(
  db: Db,
  runId: string,
  data: RunEndedData,
  counter?: number,
): Promise<number | null> {
  return appendRunEvent(db, runId, { type: 'run.ended', key: END_KEY, data: data as unknown as JsonObject }, counter);
}

/**
 * Events after `afterSeq`, in order, at most `limit`, up to the run's counter plus `probe` (ids past the counter, in
 * case its update was lost). Lookups by `_id` only: every supported server answers them from its primary index.
 */
export async function readRunEvents(
  db: Db,
  runId: string,
  range: { afterSeq: number; counter: number; probe: number; limit: number },
): Promise<RunEventDoc[]> {
  const { afterSeq } = range;
  const last = Math.min(Math.max(range.counter, afterSeq) + range.probe, afterSeq + range.limit);
  if (last <= afterSeq) return [];
  const ids: string[] = [];
  for (let seq = afterSeq + 1; seq <= last; seq++) ids.push(runEventId(runId, seq));
  const docs = await runEventsCollection(db)
    .find({ _id: { $in: ids } })
    .sort({ _id: 1 })
    .toArray();
  // Only a gap-free run from afterSeq + 1 counts (a prefix is all a writer can have finished).
  const out: RunEventDoc[] = [];
  for (const doc of docs) {
    if (doc.seq !== afterSeq + out.length + 1) break;
    out.push(doc);
  }
  return out;
}

/** The run's event counter and stored status (the one read an open stream makes while nothing happens). */
export async function readEventCounter(db: Db, runId: string): Promise<{ counter: number; status: RunStatus } | null> {
  const doc = await runCounters(db).findOne({ _id: runId }, { projection: { event_seq: 1, status: 1 } });
  return doc ? { counter: doc.event_seq ?? 0, status: doc.status } : null;
}
