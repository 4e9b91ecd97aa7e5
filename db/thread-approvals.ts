/**
 * A thread turn's approvals in its conversation (docs/threads.md): a tool call of the turn's agent that waits for the
 * owner's decision is a message, `role: approval`, right after the assistant message that made the call (its `_id`,
 * ./thread-messages.ts). One writer, the worker, on the approval's own path: the activity that lists the approval in
 * the inbox writes it as `requested`, and the call's activity, which gets the decision from the workflow, records the
 * decision on it. Each write happens once: a retried request never undoes a decision, a retried call never changes
 * it. A run that is not a thread's turn writes nothing here.
 */
import type { Db } from 'mongodb';
import type { LlmToolCall } from '../domain/transcript';
import { THREAD_STEP_ID } from '../domain/thread';
import { runsCollection } from './runs';
import { threadMessageDocId, threadMessagesCollection, type ThreadMessageDoc } from './thread-messages';

/** Which tool call of a run's transcript: the assistant message's seq and the call's index in it. */
export interface ApprovalCallAt {
  run_id: string;
  step_id: string;
  assistant_seq: number;
  call_index: number;
}

/** The thread and turn a run answers, when it is a turn's run (its agent step's calls are the turn's). */
async function turnOf(db: Db, at: ApprovalCallAt) {
  if (at.step_id !== THREAD_STEP_ID) return null;
  const run = await runsCollection(db).findOne(
    { _id: at.run_id },
    { projection: { thread_id: 1, thread_turn: 1, owner_id: 1 } },
  );
  if (!run?.thread_id || run.thread_turn === undefined) return null;
  return { threadId: run.thread_id, turn: run.thread_turn, ownerId: run.owner_id };
}

/** The approval of `call` is asked: its message, `requested` (a retried write leaves the first, or its decision). */
export async function putApprovalAsked(db: Db, at: ApprovalCallAt, call: LlmToolCall, now: Date): Promise<void> {
  const turn = await turnOf(db, at);
  if (!turn) return;
  const doc: ThreadMessageDoc = {
    _id: threadMessageDocId(turn.threadId, turn.turn, at.assistant_seq, at.call_index),
    thread_id: turn.threadId,
    owner_id: turn.ownerId,
    turn: turn.turn,
    pos: at.assistant_seq,
    role: 'approval',
    text: null,
    approval: {
      call_index: at.call_index,
      call_id: call.id,
      name: call.name,
      args: call.args,
      status: 'requested',
      decided_by: null,
      decided_at: null,
      comment: null,
    },
    created_at: now,
  };
  await threadMessagesCollection(db).updateOne({ _id: doc._id }, { $setOnInsert: doc }, { upsert: true });
}

/** The decision on `call` reached the turn: recorded on its approval message, once. */
export async function putApprovalDecided(
  db: Db,
  at: ApprovalCallAt,
  decision: { approved: boolean; by: string; comment: string | null },
  now: Date,
): Promise<void> {
  const turn = await turnOf(db, at);
  if (!turn) return;
  await threadMessagesCollection(db).updateOne(
    {
      _id: threadMessageDocId(turn.threadId, turn.turn, at.assistant_seq, at.call_index),
      'approval.status': 'requested',
    },
    {
      $set: {
        'approval.status': decision.approved ? 'approved' : 'rejected',
        'approval.decided_by': decision.by,
        'approval.decided_at': now,
        'approval.comment': decision.comment,
      },
    },
  );
}
