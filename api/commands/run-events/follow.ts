/**
 * Follows a run's event log (db/run-events.ts) for one open stream: delivers every event after the client's last,
 * in order, then waits for more by polling the run's event counter — one lookup by `_id` per EVENTS_POLL_MS, the
 * whole cost of an idle stream — until `run.ended` has been delivered, the client leaves, or the stream's time is up.
 *
 * What one stream holds is bounded: a batch of at most BATCH events, and the socket's own buffer (the writer waits for
 * `drain`, so a slow client slows its own reads instead of growing memory).
 */
import type { Db } from 'mongodb';
import {
  fillEventSeq,
  fillEventSeqs,
  firstEventAfter,
  GAP_FILL_MS,
  isLoggedEvent,
  readEventCounter,
  readRunEventWindow,
  type LoggedRunEvent,
} from '../../../db/run-events';
import { isTerminal } from '../../../db/runs';
import { logRunEnded } from '../../../db/run-end';

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
  /** How long to wait at a hole in the log before filling it (db/run-events.ts); GAP_FILL_MS unless a test says. */
  gapFillMs?: number;
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
  let endLogged = false;
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
      const gapFillMs = opts.gapFillMs ?? GAP_FILL_MS;
      // Seen twice with nothing past it in the read: look further (a stretch of expired live text can be long).
      const beyond = beyondHole ?? (hole?.seq === seq ? await firstEventAfter(db, runId, after, state.counter) : null);
      if (beyond && Date.now() - beyond.at.getTime() >= gapFillMs) {
        // A later seq written that long ago: this hole is at least as old (its seq was allocated first). Expired
        // live text, or a writer gone; filled at once, every seq up to that event.
        await fillEventSeqs(db, runId, seq, beyond.seq - seq);
        hole = undefined;
        continue;
      }
      if (hole?.seq !== seq) hole = { seq, since: Date.now() };
      else if (Date.now() - hole.since >= gapFillMs) {
        await fillEventSeq(db, runId, seq);
        hole = undefined;
        continue;
      }
    } else if (isTerminal(state.status)) {
      // Nothing left to read twice over: the client had the end already (its Last-Event-ID is at or past it).
      if (endLogged) return 'ended';
      // Ended, but the end is not logged (its writer stopped between the two writes, or the run predates the log):
      // log it now from the same document the writer uses, and deliver it on the next turn.
      await logRunEnded(db, runId);
      endLogged = true;
      continue;
    }
    if (Date.now() - lastWrite >= opts.heartbeatMs) {
      await sink.comment('ping');
      lastWrite = Date.now();
    }
    await pause(opts.pollMs, opts.signal);
  }
  return 'closed';
}
