/**
 * Follows a run's event log (db/run-events.ts) for one open stream: delivers every event after the client's last,
 * in order, then waits for more by polling the run's event counter — one lookup by `_id` per EVENTS_POLL_MS, the
 * whole cost of an idle stream — until `run.ended` has been delivered, the client leaves, or the stream's time is up.
 *
 * What one stream holds is bounded: a batch of at most BATCH events, and the socket's own buffer (the writer waits for
 * `drain`, so a slow client slows its own reads instead of growing memory).
 */
import type { Db } from 'mongodb';
import { readEventCounter, readRunEvents, type RunEventDoc } from '../../../db/run-events';
import { isTerminal, logRunEnded } from '../../../db/runs';

export const EVENTS_BATCH = 100;

export interface EventSink {
  /** Writes one event; resolves when the transport can take more. */
  event(doc: RunEventDoc): Promise<void>;
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
  while (!opts.signal.aborted) {
    if (Date.now() >= opts.deadline) return 'expired';
    const state = await readEventCounter(db, runId);
    if (!state) return 'gone';
    const ended = isTerminal(state.status);
    // Once the run has ended no writer raises the counter any more: probe a whole batch past it.
    const batch = await readRunEvents(db, runId, {
      afterSeq: after,
      counter: state.counter,
      probe: ended ? EVENTS_BATCH : 1,
      limit: EVENTS_BATCH,
    });
    for (const doc of batch) {
      if (opts.signal.aborted) return 'closed';
      await sink.event(doc);
      lastWrite = Date.now();
      after = doc.seq;
      if (doc.type === 'run.ended') return 'ended';
    }
    if (batch.length === EVENTS_BATCH) continue;
    if (ended && batch.length === 0) {
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
