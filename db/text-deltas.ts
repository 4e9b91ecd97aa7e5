/**
 * An agent's live text in the run's event log (db/run-events.ts): `agent.text.delta` batches and the
 * `agent.text.void` a retried model call starts with. They take their seqs from the run's counter like every other
 * event — so they come in order with the rest, under the same Last-Event-ID — and carry an `expires_at`: the TTL
 * index removes them after the retention, the transcript keeps the final text for good.
 *
 * Keys: `<exec>:text:<turn>:<attempt>:<batch n>` and `<exec>:text:<turn>:<attempt>:void`, unique per run, so a
 * retried write logs once. Never in Temporal's history: the model-call activity writes them and returns none of it.
 */
import type { Db } from 'mongodb';
import { appendRunEvent, runEventsCollection, type NewRunEvent } from './run-events';
import { stepOf } from './step-events';

/** One attempt of one model call of one execution: what a piece of live text belongs to. */
export interface TextStreamKey {
  runId: string;
  execId: string;
  turn: number;
  attempt: number;
}

function fields(k: TextStreamKey) {
  return {
    exec_id: k.execId,
    step_id: stepOf(k.execId),
    turn: k.turn,
    attempt: k.attempt,
  };
}

const keyPrefix = (k: TextStreamKey, attempt: number) => `${k.execId}:text:${k.turn}:${attempt}`;

/** The `n`-th batch (from 0) of an attempt's text. */
export function textDeltaEvent(k: TextStreamKey, n: number, text: string, expiresAt: Date): NewRunEvent {
  return {
    type: 'agent.text.delta',
    key: `${keyPrefix(k, k.attempt)}:${n}`,
    data: { ...fields(k), text },
    expiresAt,
  };
}

export function textVoidEvent(k: TextStreamKey, expiresAt: Date): NewRunEvent {
  return { type: 'agent.text.void', key: `${keyPrefix(k, k.attempt)}:void`, data: fields(k), expiresAt };
}

/** Appends one piece of live text (or a void); false when it was logged before (a retried write). */
export async function appendLiveText(db: Db, k: TextStreamKey, event: NewRunEvent): Promise<boolean> {
  return (await appendRunEvent(db, k.runId, event)) !== null;
}

/**
 * Whether an earlier attempt of the same call logged text (its first batch), so this attempt must void it first.
 * One lookup on the unique key index.
 */
export async function earlierAttemptStreamed(db: Db, k: TextStreamKey): Promise<boolean> {
  if (k.attempt <= 1) return false;
  const keys = Array.from({ length: k.attempt - 1 }, (_, i) => `${k.runId}/${keyPrefix(k, i + 1)}:0`);
  const found = await runEventsCollection(db).findOne({ key: { $in: keys } }, { projection: { _id: 1 } });
  return found !== null;
}
