/**
 * The `thread_messages` collection: a thread's conversation, one document per message, keyed by (thread, turn, pos)
 * so that `_id` order is conversation order. A turn's user message (pos 0) is written when the message is accepted
 * and carries the turn's state (its run, status, error, usage); the turn's answer — assistant messages, tool calls
 * with their results — is copied from the turn run's transcript when the turn ends (shared/threads/end-turn.ts),
 * with the transcript seq as pos, so a repeated copy writes the same documents. The next turns' context is read from
 * here, newest first (temporal/activities/agent/thread-context.ts).
 *
 * An approval the turn asked for (a tool call that waits for the owner's decision) is a message too, `role:
 * approval`, written by the worker on the approval's own path (./thread-approvals.ts) as it is asked and again as it
 * is decided. It goes right after the assistant message that made the call, before the calls' results: its `_id` is
 * that message's with `.a<call index, 3 digits>` appended.
 */
import type { Db } from 'mongodb';
import type { JsonValue } from '../domain/json';
import type { RunError, RunStatus, Usage } from '../domain/run';
import type { LlmToolCall } from '../domain/transcript';
import { threadMessageId } from '../domain/thread';

/** What a summary message covers, and the compaction call that wrote it (decision 0601). */
export interface ThreadSummaryInfo {
  from_turn: number;
  to_turn: number;
  model: string;
  usage: { input_tokens: number; output_tokens: number; estimated?: true };
  /** What the compaction call was sent (its answer is the message's text). */
  request: { system: string; prompt: string };
}

/** Where the summary written by turn `turn`'s compaction goes: pos 1 (transcript seq 1 is never an answer's). */
export const SUMMARY_POS = 1;

/**
 * The latest summary a turn may use: written before `turn`, or by `turn`'s own compaction. One indexed read
 * (by_thread_role), whatever the thread's length.
 */
export async function latestSummary(db: Db, threadId: string, turn: number): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne(
    { thread_id: threadId, role: 'summary', _id: { $lte: threadMessageDocId(threadId, turn, SUMMARY_POS) } },
    { sort: { _id: -1 } },
  );
}

/**
 * Writes a turn's summary unless one is there already (a retried compaction never writes two); the summary that
 * stays (this one, or the first attempt's).
 */
export async function putSummary(db: Db, doc: ThreadMessageDoc): Promise<ThreadMessageDoc> {
  const written = await threadMessagesCollection(db).updateOne(
    { _id: doc._id },
    { $setOnInsert: doc },
    { upsert: true },
  );
  if (written.upsertedCount === 1) return doc;
  return (await threadMessagesCollection(db).findOne({ _id: doc._id })) ?? doc;
}

/** What an approval message says: the call asked about, and the owner's decision once it came. */
export interface ThreadApprovalInfo {
  /** Which call of the assistant message (the message's `pos`) it is. */
  call_index: number;
  call_id: string;
  /** The tool as the model called it (for an MCP tool `<server>__<tool>`), and its arguments. */
  name: string;
  args: JsonValue;
  status: 'requested' | 'approved' | 'rejected';
  /** The deciding user's id, when, and their comment; null until decided. */
  decided_by: string | null;
  decided_at: Date | null;
  comment: string | null;
}

/** A turn's state on its user message: `queued` until it starts, then its run's status. */
export type TurnStatus = 'queued' | RunStatus;

export interface ThreadMessageDoc {
  /** `<thread>:<turn, 9 digits>:<pos, 6 digits>`. */
  _id: string;
  thread_id: string;
  owner_id: string;
  turn: number;
  pos: number;
  role: 'user' | 'assistant' | 'tool' | 'summary' | 'approval';
  text: string | null;
  /** Summary messages (pos 1 of the turn that compacted): the turns they cover and the compaction call. */
  summary?: ThreadSummaryInfo;
  /** Assistant messages: the tool calls it made. */
  tool_calls?: LlmToolCall[];
  /** Approval messages (`pos` is the assistant message's that made the call). */
  approval?: ThreadApprovalInfo;
  /** Tool messages: the call and its result. */
  tool?: { call_id: string; name: string; args: JsonValue; output: JsonValue; is_error: boolean };
  /** User messages: the turn's run (fixed when the message is accepted), its state, error and usage once ended. */
  run_id?: string;
  /**
   * User messages of a turn a workflow's agent step took (decision 0603): the step's execution id in run `run_id`
   * (the message is the step's rendered input, the answer the step's transcript).
   */
  step_id?: string;
  status?: TurnStatus;
  error?: RunError | null;
  usage?: Usage;
  /** Set on the assistant message that answered the turn. */
  final?: boolean;
  created_at: Date;
}

export function threadMessagesCollection(db: Db) {
  return db.collection<ThreadMessageDoc>('thread_messages');
}

/** The largest pos an `_id` holds (6 digits): the end of a turn's range. */
const MAX_POS = 999_999;

/** With `approval` (a call index): the approval of that call of the message at `pos`, right after it. */
export function threadMessageDocId(threadId: string, turn: number, pos: number, approval?: number): string {
  const id = `${threadId}:${String(turn).padStart(9, '0')}:${String(pos).padStart(6, '0')}`;
  return approval === undefined ? id : `${id}.a${String(approval).padStart(3, '0')}`;
}

/** The `_id` a stored message has in thread `threadId` (its own, or its copy's in a fork). */
export const messageDocIdIn = (threadId: string, doc: Pick<ThreadMessageDoc, 'turn' | 'pos' | 'approval'>) =>
  threadMessageDocId(threadId, doc.turn, doc.pos, doc.approval?.call_index);

/** The public id of a stored message. */
export const publicMessageId = (doc: Pick<ThreadMessageDoc, 'turn' | 'pos' | 'approval'>) =>
  threadMessageId(doc.turn, doc.pos, doc.approval?.call_index);

export async function insertUserMessage(
  db: Db,
  m: {
    threadId: string;
    ownerId: string;
    turn: number;
    text: string;
    runId: string;
    stepId?: string;
    queued: boolean;
    at: Date;
  },
): Promise<ThreadMessageDoc> {
  const doc: ThreadMessageDoc = {
    _id: threadMessageDocId(m.threadId, m.turn, 0),
    thread_id: m.threadId,
    owner_id: m.ownerId,
    turn: m.turn,
    pos: 0,
    role: 'user',
    text: m.text,
    run_id: m.runId,
    ...(m.stepId !== undefined ? { step_id: m.stepId } : {}),
    status: m.queued ? 'queued' : 'running',
    error: null,
    created_at: m.at,
  };
  await threadMessagesCollection(db).insertOne(doc);
  return doc;
}

/** A turn's user message, or null. */
export async function findUserMessage(db: Db, threadId: string, turn: number): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne({ _id: threadMessageDocId(threadId, turn, 0) });
}

/** The user message whose turn is the run `runId`, or null. */
export async function findTurnByRun(db: Db, threadId: string, runId: string): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne({ thread_id: threadId, pos: 0, run_id: runId });
}

/** The user message of the turn a workflow's agent step (`stepId` of run `runId`) took in the thread, or null. */
export async function findStepTurn(
  db: Db,
  threadId: string,
  runId: string,
  stepId: string,
): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne({ thread_id: threadId, pos: 0, run_id: runId, step_id: stepId });
}

/**
 * The oldest message still waiting for its turn, or null. Queued turns come after every turn that started, so the
 * read starts after `afterTurn` (a turn known to have started): a range of the `_id` index, not the whole thread.
 */
export async function oldestQueued(db: Db, threadId: string, afterTurn: number): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne(
    { thread_id: threadId, _id: { $gt: threadMessageDocId(threadId, afterTurn, MAX_POS) }, pos: 0, status: 'queued' },
    { sort: { _id: 1 } },
  );
}

/** Records a turn's state on its user message (a turn that ended keeps its end: later writes change nothing). */
export async function setTurnState(
  db: Db,
  threadId: string,
  turn: number,
  state: { status: TurnStatus; error?: RunError | null; usage?: Usage },
): Promise<boolean> {
  const written = await threadMessagesCollection(db).updateOne(
    { _id: threadMessageDocId(threadId, turn, 0), status: { $in: ['queued', 'running', 'waiting'] } },
    { $set: state },
  );
  return written.modifiedCount === 1;
}

/** A queued turn cancelled before it started; false when it is no longer queued. */
export async function cancelQueuedTurn(db: Db, threadId: string, turn: number): Promise<boolean> {
  const written = await threadMessagesCollection(db).updateOne(
    { _id: threadMessageDocId(threadId, turn, 0), status: 'queued' },
    {
      $set: {
        status: 'cancelled',
        error: { step_id: null, reason: 'cancelled', message: 'cancelled before it started' },
      },
    },
  );
  return written.modifiedCount === 1;
}

/** The assistant message that answered a turn, or null: one turn's range of the `_id` index. */
export async function findReply(db: Db, threadId: string, turn: number): Promise<ThreadMessageDoc | null> {
  return threadMessagesCollection(db).findOne({
    thread_id: threadId,
    _id: { $gt: threadMessageDocId(threadId, turn, 0), $lte: threadMessageDocId(threadId, turn, MAX_POS) },
    role: 'assistant',
    final: true,
  });
}

/** Writes a turn's answer (idempotent: each message's `_id` is fixed by its transcript seq). */
export async function putTurnMessages(db: Db, docs: ThreadMessageDoc[]): Promise<void> {
  if (docs.length === 0) return;
  await threadMessagesCollection(db).bulkWrite(
    docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
    { ordered: false },
  );
}

/**
 * The messages of the turns after `afterTurn` and before `turn`, newest first, at most `limit` of them: the context a
 * turn is opened with is cut from these (whole turns that fit the window). One range of the `_id` index.
 */
export async function readEarlierMessages(
  db: Db,
  threadId: string,
  range: { afterTurn: number; turn: number },
  limit: number,
): Promise<ThreadMessageDoc[]> {
  const _id = {
    $gte: threadMessageDocId(threadId, range.afterTurn + 1, 0),
    $lt: threadMessageDocId(threadId, range.turn, 0),
  };
  return threadMessagesCollection(db).find({ thread_id: threadId, _id }).sort({ _id: -1 }).limit(limit).toArray();
}

/** How many approval messages a turn has (its answer's count on the thread includes them). */
export async function countTurnApprovals(db: Db, threadId: string, turn: number): Promise<number> {
  return threadMessagesCollection(db).countDocuments({
    thread_id: threadId,
    role: 'approval',
    _id: { $gt: threadMessageDocId(threadId, turn, 0), $lt: threadMessageDocId(threadId, turn + 1, 0) },
  });
}

export async function countThreadMessages(db: Db, threadId: string): Promise<number> {
  return threadMessagesCollection(db).countDocuments({ thread_id: threadId });
}

/** Every message up to and including `turn`/`pos` (the approval of call `approval` of it), in order (a fork's copy). */
export async function readMessagesUpTo(
  db: Db,
  threadId: string,
  point: { turn: number; pos: number; approval?: number | undefined },
): Promise<ThreadMessageDoc[]> {
  return threadMessagesCollection(db)
    .find({ thread_id: threadId, _id: { $lte: threadMessageDocId(threadId, point.turn, point.pos, point.approval) } })
    .sort({ _id: 1 })
    .toArray();
}

export async function insertThreadMessages(db: Db, docs: ThreadMessageDoc[]): Promise<void> {
  if (docs.length > 0) await threadMessagesCollection(db).insertMany(docs, { ordered: false });
}

export async function removeThreadMessages(db: Db, threadId: string): Promise<void> {
  await threadMessagesCollection(db).deleteMany({ thread_id: threadId });
}

/**
 * The run ids of every turn of a thread that has a run of its own — not the workflow runs whose agent steps took
 * turns (decision 0603): those belong to their workflow and stay when the thread goes.
 */
export async function threadRunIds(db: Db, threadId: string): Promise<string[]> {
  const docs = await threadMessagesCollection(db)
    .find({ thread_id: threadId, pos: 0, step_id: { $exists: false } }, { projection: { run_id: 1 } })
    .toArray();
  return docs.flatMap((d) => (d.run_id ? [d.run_id] : []));
}
