/**
 * A thread's working memory (decision 0601): the current document is on the thread (`memory`, `memory_version`), each
 * change is a document in `thread_memory_versions` (`<thread>:<version, 9 digits>`), written by one compare-and-set
 * on the thread's `memory_version` after the version's insert — the version's `_id` is unique, so two writers of the
 * same version cannot both succeed. An agent's change names its tool call (`call`), so a retried call finds it.
 */
import type { Db } from 'mongodb';
import type { JsonObject } from '../domain/json';
import { threadsCollection } from './threads';

export interface MemoryVersionDoc {
  _id: string;
  thread_id: string;
  owner_id: string;
  version: number;
  memory: JsonObject;
  /** `user` (the API) or `agent` (the update_memory tool, in turn `turn`). */
  by: 'user' | 'agent';
  turn: number | null;
  /** The agent's tool call (`<run>:<seq>`), so a retried call does not write twice. */
  call: string | null;
  created_at: Date;
}

export function memoryVersionsCollection(db: Db) {
  return db.collection<MemoryVersionDoc>('thread_memory_versions');
}

export function memoryVersionId(threadId: string, version: number): string {
  return `${threadId}:${String(version).padStart(9, '0')}`;
}

export type MemoryWrite = { ok: true; version: number } | { ok: false; reason: 'changed' | 'gone' };

/**
 * Makes `memory` the thread's version `from + 1`, unless another change got there first (`changed`: read and try
 * again). The version is inserted first (its `_id` fixes the number), then the thread moves to it conditionally.
 */
export async function writeMemory(
  db: Db,
  args: {
    threadId: string;
    ownerId: string;
    from: number;
    memory: JsonObject;
    by: 'user' | 'agent';
    turn: number | null;
    call: string | null;
  },
): Promise<MemoryWrite> {
  const version = args.from + 1;
  const doc: MemoryVersionDoc = {
    _id: memoryVersionId(args.threadId, version),
    thread_id: args.threadId,
    owner_id: args.ownerId,
    version,
    memory: args.memory,
    by: args.by,
    turn: args.turn,
    call: args.call,
    created_at: new Date(),
  };
  try {
    await memoryVersionsCollection(db).insertOne(doc);
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return { ok: false, reason: 'changed' };
    throw err;
  }
  const moved = await threadsCollection(db).updateOne(
    { _id: args.threadId, memory_version: args.from, deleting: { $exists: false } },
    { $set: { memory: args.memory, memory_version: version, updated_at: new Date() } },
  );
  if (moved.modifiedCount === 1) return { ok: true, version };
  // The thread moved on (or is gone): the version written above is not the thread's, so it goes.
  await memoryVersionsCollection(db).deleteOne({ _id: doc._id });
  const exists = await threadsCollection(db).countDocuments({ _id: args.threadId }, { limit: 1 });
  return { ok: false, reason: exists ? 'changed' : 'gone' };
}

/** The version an agent's tool call wrote, or null. */
export async function findCallVersion(db: Db, threadId: string, call: string): Promise<MemoryVersionDoc | null> {
  return memoryVersionsCollection(db).findOne({ thread_id: threadId, call });
}

export async function removeMemoryVersions(db: Db, threadId: string): Promise<void> {
  await memoryVersionsCollection(db).deleteMany({ thread_id: threadId });
}
