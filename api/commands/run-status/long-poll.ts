/**
 * `?wait=`: re-reads the projection until it changes (or, with `until=end`, until the run has ended). MongoDB change
 * streams are not available on every supported server (a standalone mongod, the embedded test server), so it polls —
 * quickly at first (steps of short runs finish within tens of ms), backing off to a steady rate for long waits. The
 * one change that matters most, the run's end, comes from Temporal as it happens: while the wait lasts it also holds
 * Temporal's own long poll for the execution's close (the run writes its terminal projection just before it closes),
 * so a waiting client learns of the end at once instead of at the next poll.
 *
 * A client that only wants the end (`until=end`) is answered once, not at each of a busy run's changes: a map of 200
 * items changes its projection with every item, and each answer costs the client a request and the API a full read.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { findRun, isTerminal } from '../../../db/runs';
import type { PresentableRun } from '../../../shared/run-view/view';

const WAIT_POLL_FIRST_MS = 20;
const WAIT_POLL_MAX_MS = 250;
/**
 * Waiting for the end with Temporal's close watch held, the projection is read this often: the watch tells of the end,
 * these reads only catch a run that ended without Temporal's word reaching this process.
 */
const END_POLL_MS = 1_000;

/** What a wait answers at: the projection's first change, or the run's end. */
export type WaitUntil = 'change' | 'end';

/**
 * Bounds how many waits of this process hold a Temporal long poll at once: each is a stream on the client's one
 * HTTP/2 connection, which run starts share. Waits beyond the bound just poll. One per process (api/compose.ts).
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
      void this.temporal.connection
        .withAbortSignal(signal, () => this.temporal.workflow.getHandle(runId).result())
        .then(
          () => settle(true),
          // Failed, cancelled, terminated or timed out: closed too. Anything else (aborted, unreachable): not known.
          (err: unknown) => settle(err instanceof WorkflowFailedError),
        );
    });
  }
}

/**
 * Re-reads until the projection changes (status or any progress write) — or, `until` `end`, until it is terminal —
 * or the time is up.
 */
export async function waitForChange(
  db: Db,
  first: PresentableRun,
  waitMs: number,
  watches?: CloseWatches,
  until: WaitUntil = 'change',
): Promise<PresentableRun> {
  const deadline = Date.now() + waitMs;
  const stop = new AbortController();
  // Raced with each pause until it fires once (a projection that stays behind a closed run is the reconciler's business).
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
  // Waiting for the end, the watch is the point: held from the start.
  if (until === 'end') watch();
  const answers = (next: PresentableRun) =>
    until === 'end'
      ? isTerminal(next.status)
      : next.status !== first.status || next.updated_at.getTime() !== first.updated_at.getTime();
  try {
    while (Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const pause = until === 'end' && closed ? END_POLL_MS : pollMs;
      const tick = new Promise((r) => (timer = setTimeout(r, Math.min(pause, Math.max(0, deadline - Date.now())))));
      await (closed ? Promise.race([tick, closed]) : tick);
      clearTimeout(timer);
      pollMs = Math.min(WAIT_POLL_MAX_MS, pollMs * 1.5);
      const next = await findRun(db, first.owner_id, first._id);
      if (!next) return current;
      current = next;
      if (answers(next)) break;
      if (!watching) watch();
    }
    return current;
  } finally {
    stop.abort();
  }
}
