/**
 * Follows a run's event log (db/run-events.ts) for one open stream: delivers every event after the client's last,
 * in order, then waits for more by polling the run's event counter — one lookup by `_id` per EVENTS_POLL_MS, the
 * whole cost of an idle stream — until `run.ended` has been delivered, the client leaves, or the stream's time is up.
 * It writes nothing: an old hole in the log is stepped over, and an end its writer never logged is delivered from
 * the run's document (db/run-events.ts says why neither loses an event).
 *
 * What one stream holds is bounded: a batch of at most BATCH events, and the socket's own buffer (the writer waits for
 * `drain`, so a slow client slows its own reads instead of growing memory).
 */
import type { Db } from 'mongodb';
import {
  firstEventAfter,
  HOLE_MS,
  isLoggedEvent,
  readEventCounter,
  readRunEventWindow,
  type LoggedRunEvent,
} from '../../../db/run-events';
import { isTerminal } from '../../../db/runs';
import { unloggedRunEnd } from '../../../db/run-end';

export const EVENTS_BATCH = 100;

export interface EventSink {
  /** Writes one event; resolves when the transport can take more. */
  event(doc: LoggedRunEvent): Promise<void>;
  /** A comment line (heartbeat). */
  comment(text: string): Promise<void>;
}

export interface FollowOptions {
  afterSeq: number;
  pollMs: number;
  heartbeatMs: number;
  /** The stream ends (without `run.ended`) at this time; the client reconnects with Last-Event-ID. */
  deadline: number;
  signal: AbortSignal;
  /** How old a hole in the log is when it is stepped over (db/run-events.ts); HOLE_MS unless a test says. */
  holeMs?: number;
}

export type FollowEnd = 'ended' | 'closed' | 'expired' | 'gone';

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function followRunEvents(db: Db, runId: string, sink: EventSink, opts: FollowOptions): Promise<FollowEnd> {
  let after = opts.afterSeq;
  let lastWrite = Date.now();
  const holeMs = opts.holeMs ?? HOLE_MS;
  /** The first missing seq below the counter, and since when this reader has seen it missing. */
  let hole: { seq: number; since: number } | undefined;
  while (!opts.signal.aborted) {
    if (Date.now() >= opts.deadline) return 'expired';
    const state = await readEventCounter(db, runId);
    if (!state) return 'gone';
    const range = { afterSeq: after, counter: state.counter, limit: EVENTS_BATCH };
    const { events: batch, beyondHole } = await readRunEventWindow(db, runId, range);
    for (const doc of batch) {
      if (opts.signal.aborted) return 'closed';
      after = doc.seq;
      if (!isLoggedEvent(doc)) continue;
      await sink.event(doc);
      lastWrite = Date.now();
      if (doc.type === 'run.ended') return 'ended';
    }
    if (batch.length === EVENTS_BATCH) continue;
    if (state.counter > after) {
      // A seq was allocated but holds nothing yet: its writer is between its two writes, or stopped there for good.
      const seq = after + 1;
      // Seen twice with nothing past it in the read: look further (a stretch of expired live text can be long).
      const beyond = beyondHole ?? (hole?.seq === seq ? await firstEventAfter(db, runId, after, state.counter) : null);
      if (beyond && Date.now() - beyond.at.getTime() >= holeMs) {
        // A later seq written that long ago: this hole is at least as old (its seq was allocated first). Expired
        // live text, or a writer gone: stepped over at once, every seq up to that event.
        after = beyond.seq - 1;
        hole = undefined;
        continue;
      }
      if (hole?.seq !== seq) hole = { seq, since: Date.now() };
      else if (Date.now() - hole.since >= holeMs) {
        after = seq;
        hole = undefined;
        continue;
      }
    } else if (isTerminal(state.status)) {
      // Nothing left to read. A client past the counter had the end delivered from the run's document already; one
      // at it either had the logged end (then there is none to build) or never got one: its writer stopped.
      if (after === state.counter) {
        const end = await unloggedRunEnd(db, runId, state.counter + 1);
        if (end) await sink.event(end);
      }
      return 'ended';
    }
    if (Date.now() - lastWrite >= opts.heartbeatMs) {
      await sink.comment('ping');
      lastWrite = Date.now();
    }
    await pause(opts.pollMs, opts.signal);
  }
  return 'closed';
}
