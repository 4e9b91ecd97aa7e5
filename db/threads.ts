/**
 * The `threads` collection: one document per conversation (docs/threads.md, decision 0600). Besides what the user
 * set (template, title, metadata, overrides) it holds the turn state every writer changes by compare-and-set on
 * `version`: the number of turns accepted (`turns`, also the last turn's number), the running turn (its run), how
 * many accepted messages wait (`queued`), the last message's id (what `after` is checked against) and the usage of
 * the turns that ended. One conditional write accepts a message, one ends a turn, one starts the next queued one, so
 * every message is taken once and the turns of a thread run one at a time in the order they were accepted.
 */
import type { Db, Filter } from 'mongodb';
import type { JsonObject } from '../domain/json';
import type { McpToolSelection } from '../domain/mcp';
import type { Usage } from '../domain/run';
import type { MessagePolicy, ThreadBudget } from '../domain/thread';

/** What a thread changes of its template for every turn. */
export interface ThreadOverrides {
  /** `provider:model` instead of the template's. */
  model?: string;
  /** Added to the template's system prompt. */
  instructions?: string;
  tools?: string[];
  mcp_tools?: McpToolSelection[];
  budget?: ThreadBudget;
  /** The thread's message policy (absent: `reject`). */
  policy?: MessagePolicy;
}

/** Metadata values are flat scalars so that a list can filter on them (`?metadata.<key>=<value>`). */
export type ThreadMetadata = Record<string, string | number | boolean>;

export interface RunningTurn {
  turn: number;
  run_id: string;
  /** A turn taken by a workflow's agent step (decision 0603): the step's execution in run `run_id`. */
  step_id?: string;
}

export interface ThreadDoc {
  _id: string;
  owner_id: string;
  template_id: string;
  template_name: string;
  title: string | null;
  metadata: ThreadMetadata;
  overrides: ThreadOverrides;
  /** Turns accepted so far (started, running, queued or ended): the last turn's number. */
  turns: number;
  /** Accepted messages waiting for the running turn to end (policy `enqueue`). */
  queued: number;
  running: RunningTurn | null;
  /** The public id of the conversation's last message (null while empty): a message's `after` must name it. */
  last_message_id: string | null;
  /** Messages in the conversation (user messages, and each ended turn's answer). */
  message_count: number;
  /** The ended turns' model usage, summed. */
  usage: Usage;
  /** Changed by every write of the turn state (compare-and-set). */
  version: number;
  /**
   * The last turn the latest summary covers (decision 0601; absent: none), written with the summary's count: where a
   * turn's context read starts. Only ever behind the summaries (then the read is longer, never wrong).
   */
  summarized_to?: number;
  /** The template's `memory_schema` when the thread was created (decision 0601); absent: no working memory. */
  memory_schema?: JsonObject;
  /** The working memory (with a memory schema): changed only through db/thread-memory.ts. */
  memory?: JsonObject;
  /** The memory's version (0: as created); each change is one more, listed in `thread_memory_versions`. */
  memory_version?: number;
  /** Set once a DELETE has begun: nothing new is accepted or started. */
  deleting?: true;
  created_at: Date;
  updated_at: Date;
}

export function threadsCollection(db: Db) {
  return db.collection<ThreadDoc>('threads');
}

const alive = { deleting: { $exists: false } } as const;

export async function insertThread(db: Db, doc: ThreadDoc): Promise<void> {
  await threadsCollection(db).insertOne(doc);
}

/** The owner's thread (also one being deleted), or null: another user's thread is an unknown one. */
export async function findOwnThread(db: Db, ownerId: string, id: string): Promise<ThreadDoc | null> {
  return threadsCollection(db).findOne({ _id: id, owner_id: ownerId });
}

/** A thread by id whoever owns it (the worker's turn end). */
export async function findThread(db: Db, id: string): Promise<ThreadDoc | null> {
  return threadsCollection(db).findOne({ _id: id });
}

export interface ThreadSearch {
  ownerId: string;
  templateId?: string | undefined;
  /** Exact values of metadata keys. */
  metadata?: ThreadMetadata | undefined;
  /** A substring of the title, case-insensitive. */
  text?: string | undefined;
}

export function threadSearchFilter(search: ThreadSearch): Filter<ThreadDoc> {
  const filter: Record<string, unknown> = { owner_id: search.ownerId, ...alive };
  if (search.templateId !== undefined) filter.template_id = search.templateId;
  for (const [key, value] of Object.entries(search.metadata ?? {})) filter[`metadata.${key}`] = value;
  if (search.text) filter.title = { $regex: search.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), $options: 'i' };
  return filter;
}

/** Changes title and metadata of a thread not being deleted; the thread as written, or null. */
export async function updateOwnThread(
  db: Db,
  ownerId: string,
  id: string,
  change: { title?: string | null; metadata?: ThreadMetadata },
): Promise<ThreadDoc | null> {
  return threadsCollection(db).findOneAndUpdate(
    { _id: id, owner_id: ownerId, ...alive },
    { $set: { ...change, updated_at: new Date() } },
    { returnDocument: 'after' },
  );
}

/** What accepting a message did: started its turn, queued it, or refused it (and why). */
export type Acceptance =
  | { kind: 'started'; turn: number }
  | { kind: 'queued'; turn: number }
  | { kind: 'busy'; running: RunningTurn | null; queued: number }
  | { kind: 'stale'; last: string | null }
  | { kind: 'deleting' }
  | { kind: 'gone' };

/**
 * Accepts one message as the thread's next turn, in one compare-and-set write on the thread's version (re-read and
 * tried again when another writer got there first): started at once when no turn runs and none waits; else queued
 * (`enqueue`) or refused (`reject`). `after` (the last message the client saw) must still be the last message.
 * `messageId(turn)` is the public id of the turn's user message, which becomes the last one. `read`: the thread as the
 * caller read it for this request, decided on first instead of reading it again — a refusal from it is one the
 * request could have met at that read; a write it made stale fails the compare-and-set and is tried on a fresh read.
 */
export async function acceptTurn(
  db: Db,
  args: {
    ownerId: string;
    threadId: string;
    after: string | undefined;
    enqueue: boolean;
    runId: string;
    /** A workflow's agent step taking the turn (decision 0603): its execution id, kept on the running turn. */
    stepId?: string;
    messageId: (turn: number) => string;
    read?: ThreadDoc;
  },
): Promise<Acceptance> {
  for (let read = args.read; ; read = undefined) {
    const t = read ?? (await findOwnThread(db, args.ownerId, args.threadId));
    if (!t) return { kind: 'gone' };
    if (t.deleting) return { kind: 'deleting' };
    if (args.after !== undefined && t.last_message_id !== args.after) return { kind: 'stale', last: t.last_message_id };
    const idle = t.running === null && t.queued === 0;
    if (!idle && !args.enqueue) return { kind: 'busy', running: t.running, queued: t.queued };
    const turn = t.turns + 1;
    const set: Partial<ThreadDoc> = { turns: turn, last_message_id: args.messageId(turn), updated_at: new Date() };
    if (idle)
      set.running = { turn, run_id: args.runId, ...(args.stepId !== undefined ? { step_id: args.stepId } : {}) };
    const written = await threadsCollection(db).updateOne(
      { _id: t._id, version: t.version, ...alive },
      { $set: set, $inc: { version: 1, message_count: 1, ...(idle ? {} : { queued: 1 }) } },
    );
    if (written.modifiedCount === 1) return { kind: idle ? 'started' : 'queued', turn };
  }
}

/**
 * Ends the running turn `turn` once: clears it, adds its usage and, when no later message was accepted meanwhile,
 * makes `lastMessageId` (its last entry) the thread's last message. False when the turn is not the running one (its
 * end was written already, by the worker or by the API's repair).
 */
export async function endTurn(
  db: Db,
  threadId: string,
  turn: number,
  usage: Usage,
  answer: { lastMessageId: string | null; messages: number },
): Promise<boolean> {
  const { lastMessageId } = answer;
  const update = (last: boolean) => ({
    $set: {
      running: null,
      updated_at: new Date(),
      ...(last && lastMessageId ? { last_message_id: lastMessageId } : {}),
    },
    $inc: {
      version: 1,
      message_count: answer.messages,
      'usage.llm_calls': usage.llm_calls,
      'usage.input_tokens': usage.input_tokens,
      'usage.output_tokens': usage.output_tokens,
    },
  });
  const coll = threadsCollection(db);
  const first = await coll.updateOne({ _id: threadId, 'running.turn': turn, turns: turn }, update(true));
  if (first.modifiedCount === 1) return true;
  return (await coll.updateOne({ _id: threadId, 'running.turn': turn }, update(false))).modifiedCount === 1;
}

/** A queued turn cancelled before it started: one fewer waits. */
export async function dropQueuedTurn(db: Db, threadId: string): Promise<void> {
  await threadsCollection(db).updateOne(
    { _id: threadId, queued: { $gt: 0 } },
    { $inc: { version: 1, queued: -1 }, $set: { updated_at: new Date() } },
  );
}

/**
 * A thread counting queued messages none of which exists (their requests stopped between the accept and the message's
 * write, and were not retried): the count is cleared, unless the thread changed since it was read. True when cleared.
 */
export async function clearLostQueue(db: Db, thread: Pick<ThreadDoc, '_id' | 'version'>): Promise<boolean> {
  const written = await threadsCollection(db).updateOne(
    { _id: thread._id, version: thread.version, running: null },
    { $set: { queued: 0, updated_at: new Date() }, $inc: { version: 1 } },
  );
  return written.modifiedCount === 1;
}

/** Makes the queued turn `turn` the running one (the oldest waiting); false when another writer started a turn. */
export async function claimQueuedTurn(db: Db, threadId: string, turn: number, runId: string): Promise<boolean> {
  const written = await threadsCollection(db).updateOne(
    { _id: threadId, running: null, queued: { $gt: 0 }, ...alive },
    { $set: { running: { turn, run_id: runId }, updated_at: new Date() }, $inc: { version: 1, queued: -1 } },
  );
  return written.modifiedCount === 1;
}

/** Marks the owner's thread as being deleted (nothing new starts); the thread as it was, or null when unknown. */
export async function markThreadDeleting(db: Db, ownerId: string, id: string): Promise<ThreadDoc | null> {
  return threadsCollection(db).findOneAndUpdate(
    { _id: id, owner_id: ownerId },
    { $set: { deleting: true, updated_at: new Date() }, $inc: { version: 1 } },
    { returnDocument: 'after' },
  );
}

export async function removeThreadDoc(db: Db, id: string): Promise<void> {
  await threadsCollection(db).deleteOne({ _id: id });
}
