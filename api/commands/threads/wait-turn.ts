/**
 * `?wait=N` of POST …/messages: a turn is a run, so the wait is the run status wait for a run's end (decision 0240,
 * ../run-status/long-poll.ts): it holds Temporal's long poll for the close of the turn's run (`CloseWatches`) and reads
 * besides only once a second, for an end Temporal's word did not bring — not a loop of its own re-reading the
 * message. The turn's end is written on its user message by the write that records the run's end, before the run's
 * workflow closes (temporal/activities/projection.ts, shared/threads/end-turn.ts), so once the run has closed the
 * message says the turn ended. A queued message waits for the close of the turn running before it first — that turn's
 * end starts the next one, also before it closes — and then for its own.
 */
import type { Db } from 'mongodb';
import { findUserMessage, type ThreadMessageDoc } from '../../../db/thread-messages';
import { findThread } from '../../../db/threads';
import { isTerminal } from '../../../db/runs';
import type { CloseWatches } from '../run-status/long-poll';

/** With Temporal's close watch held, the message is read this often besides (as the run status wait does). */
const READ_WATCHING_MS = 1_000;
/** Without one (every watch of the process is taken: ../run-status/long-poll.ts), this often. */
const READ_UNWATCHED_MS = 250;

interface WaitDeps {
  db: Db;
  closeWatches?: CloseWatches | undefined;
}

/** A turn that has ended (its run's terminal status is on its user message). */
export const turnEnded = (m: ThreadMessageDoc) =>
  m.status !== undefined && m.status !== 'queued' && isTerminal(m.status);

/** The user message of `message`'s turn once the turn has ended, or as it is when `waitMs` is over. */
export async function waitForTurn(
  deps: WaitDeps,
  message: ThreadMessageDoc,
  waitMs: number,
): Promise<ThreadMessageDoc> {
  const deadline = Date.now() + waitMs;
  let current = message;
  const closed = new Set<string>();
  while (!turnEnded(current) && Date.now() < deadline) {
    const runId = await runBefore(deps.db, current);
    // No run to wait for (a turn whose start was interrupted), or one that closed without the turn moving on (its end
    // was missed; the next message repairs it): nothing will change within the wait.
    if (!runId || closed.has(runId)) break;
    const step = await untilClosed(deps, current, runId, deadline);
    current = step.message;
    if (step.closed) closed.add(runId);
  }
  return current;
}

/**
 * Waits for the close of the run `runId` (or the deadline), reading `message` again once a second meanwhile — or
 * sooner without a watch; returns early when the message changed (the turn ended, or the queued turn started).
 */
async function untilClosed(
  deps: WaitDeps,
  message: ThreadMessageDoc,
  runId: string,
  deadline: number,
): Promise<{ message: ThreadMessageDoc; closed: boolean }> {
  const stop = new AbortController();
  let isClosed = false;
  const close = deps.closeWatches?.closeOf(runId, stop.signal)?.then(() => {
    isClosed = true;
  });
  const readMs = close ? READ_WATCHING_MS : READ_UNWATCHED_MS;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise((r) => (timer = setTimeout(r, Math.min(readMs, Math.max(0, deadline - Date.now())))));
      await (close ? Promise.race([tick, close]) : tick);
      clearTimeout(timer);
      const now = (await findUserMessage(deps.db, message.thread_id, message.turn)) ?? message;
      if (isClosed || now.status !== message.status || Date.now() >= deadline)
        return { message: now, closed: isClosed };
    }
  } finally {
    stop.abort();
  }
}

/** The run whose close the turn waits for next: its own, or — queued — the one running before it. */
async function runBefore(db: Db, m: ThreadMessageDoc): Promise<string | undefined> {
  if (m.status !== 'queued') return m.run_id;
  const thread = await findThread(db, m.thread_id);
  // Between a turn's end and the next one's start no turn runs: the previous turn's run has not closed yet.
  return thread?.running?.run_id ?? (await findUserMessage(db, m.thread_id, m.turn - 1))?.run_id;
}
