/**
 * `?wait=`: re-reads the projection until it changes. MongoDB change streams are not available on every supported
 * server (a standalone mongod, the embedded test server), so it polls — quickly at first (steps of short runs finish
 * within tens of ms), backing off to a steady rate for long waits. The one change that matters most, the run's end,
 * comes from Temporal as it happens: while the wait lasts it also holds Temporal's own long poll for the execution's
 * close (the run writes its terminal projection just before it closes), so a waiting client learns of the end at once
 * instead of at the next poll.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { findRun } from '../../../db/runs';
import type { RunView } from './read';

const WAIT_POLL_FIRST_MS = 20;
const WAIT_POLL_MAX_MS = 250;
/** A close watch of a run Temporal does not have yet looks again this often, this many times. */
const NOT_STARTED_PAUSE_MS = 20;
const NOT_STARTED_LOOKS = 50;

/**
 * Bounds how many waits of this process hold a Temporal long poll at once: each is a stream on the client's one
 * HTTP/2 connection, which run starts share. Waits beyond the bound just poll. One per app.
 */
export class CloseWatches {
  private active = 0;

  constructor(
    private readonly temporal: Client,
    private readonly max = 32,
  ) {}

  /** Resolves when the execution closes (not when Temporal is unreachable: the poll goes on); stops with `signal`. */
  closeOf(runId: string, signal: AbortSignal): Promise<void> | undefined {
    if (this.active >= this.max) return undefined;
    this.active++;
    return new Promise<void>((resolve) => {
      // The slot is free before the caller hears of the close.
      const settle = (closed: boolean) => {
        this.active--;
        if (closed) resolve();
      };
      let lookedFor = 0;
      const poll = () =>
        void this.temporal.connection
          .withAbortSignal(signal, () => this.temporal.workflow.getHandle(runId).result())
          .then(
            () => settle(true),
            (err: unknown) => {
              // Failed, cancelled, terminated or timed out: closed too.
              if (err instanceof WorkflowFailedError) return settle(true);
              // Not there yet: a start made just behind its answer (../execution-starts.ts) lands within moments.
              if (err instanceof WorkflowNotFoundError && !signal.aborted && ++lookedFor <= NOT_STARTED_LOOKS) {
                setTimeout(poll, NOT_STARTED_PAUSE_MS);
                return;
              }
              // Anything else (aborted, unreachable): not known.
              settle(false);
            },
          );
      poll();
    });
  }
}

/** Re-reads until the projection changes (status or any progress write) or the time is up. */
export async function waitForChange(db: Db, first: RunView, waitMs: number, watches?: CloseWatches): Promise<RunView> {
  const deadline = Date.now() + waitMs;
  const stop = new AbortController();
  // Raced with each pause until it fires once (a projection that stays behind a closed run is read-repair's business).
  // Held only from the first re-read that finds nothing new: a busy run (a map's items) answers a wait within the
  // first pause, and a Temporal long poll opened and dropped for each of those waits cost more than the wait itself.
  let closed: Promise<void> | undefined;
  let watching = false;
  const watch = () => {
    watching = true;
    closed = watches?.closeOf(first._id, stop.signal)?.then(() => {
      closed = undefined;
    });
  };
  let current = first;
  let pollMs = WAIT_POLL_FIRST_MS;
  try {
    while (Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise((r) => (timer = setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now())))));
      await (closed ? Promise.race([tick, closed]) : tick);
      clearTimeout(timer);
      pollMs = Math.min(WAIT_POLL_MAX_MS, pollMs * 1.5);
      const next = await findRun(db, first.owner_id, first._id);
      if (!next) return current;
      current = next;
      if (next.status !== first.status || next.updated_at.getTime() !== first.updated_at.getTime()) break;
      if (!watching) watch();
    }
    return current;
  } finally {
    stop.abort();
  }
}
