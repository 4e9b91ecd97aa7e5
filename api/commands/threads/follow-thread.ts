/**
 * Follows a thread for one open event stream (GET /api/v1/threads/:id/events): each turn's run events in turn order,
 * read with the run event follower (../run-events/follow.ts), each tagged with its turn so that the event id
 * `<turn>.<seq>` resumes exactly where the client left off. After a turn's `run.ended` the next turn follows; when
 * there is none yet the stream waits for it (polling the thread), sending heartbeats, until the client leaves or the
 * stream's time is up — or, with `untilIdle`, ends. Turns that never ran (refused at their start, cancelled while queued, a fork's copies) have
 * no events and are stepped over. It writes nothing.
 */
import type { Db } from 'mongodb';
import type { LoggedRunEvent } from '../../../db/run-events';
import { findUserMessage } from '../../../db/thread-messages';
import { findThread } from '../../../db/threads';
import { followRunEvents, type FollowEnd } from '../run-events/follow';

export interface ThreadEventSink {
  event(turn: number, doc: LoggedRunEvent): Promise<void>;
  comment(text: string): Promise<void>;
}

export interface ThreadFollowOptions {
  /** Resume after event `seq` of turn `turn` (`{0, 0}`: from the first turn). */
  after: { turn: number; seq: number };
  pollMs: number;
  heartbeatMs: number;
  deadline: number;
  signal: AbortSignal;
  /** End the stream once every turn accepted so far was delivered (`?until=idle`) instead of waiting for more. */
  untilIdle?: boolean;
}

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

export async function followThreadEvents(
  db: Db,
  threadId: string,
  sink: ThreadEventSink,
  opts: ThreadFollowOptions,
): Promise<FollowEnd> {
  // Resuming after a turn's last event lands on that turn again: its follower finds nothing after it and ends.
  let turn = Math.max(1, opts.after.turn);
  let afterSeq = opts.after.turn >= 1 ? opts.after.seq : 0;
  let lastWrite = Date.now();
  while (!opts.signal.aborted) {
    if (Date.now() >= opts.deadline) return 'expired';
    const message = await findUserMessage(db, threadId, turn);
    if (message?.step_id !== undefined) {
      // A turn a workflow's agent step took (decision 0603): its run's events are the whole workflow's, not streamed
      // here; the turn's messages appear when the step has ended.
      if (message.status !== 'running') {
        turn += 1;
        afterSeq = 0;
        continue;
      }
    } else if (message?.run_id && message.status !== 'queued') {
      const end = await followRunEvents(
        db,
        message.run_id,
        {
          event: async (doc) => {
            lastWrite = Date.now();
            await sink.event(turn, doc);
          },
          comment: (text) => sink.comment(text),
        },
        { afterSeq, pollMs: opts.pollMs, heartbeatMs: opts.heartbeatMs, deadline: opts.deadline, signal: opts.signal },
      );
      if (end === 'ended' || (end === 'gone' && message.status !== 'running')) {
        turn += 1;
        afterSeq = 0;
        continue;
      }
      if (end !== 'gone') return end;
    } else if (message && message.status !== 'queued') {
      // A turn without a run of its own (a fork's copy): nothing to stream.
      turn += 1;
      afterSeq = 0;
      continue;
    } else if (!message) {
      const thread = await findThread(db, threadId);
      if (!thread) return 'gone';
      if (opts.untilIdle && turn > thread.turns) return 'ended';
    }
    if (Date.now() - lastWrite >= opts.heartbeatMs) {
      await sink.comment('ping');
      lastWrite = Date.now();
    }
    await pause(opts.pollMs, opts.signal);
  }
  return 'closed';
}
