/**
 * The hand-written service's database: its own collections (`keys`, `workflows`, `runs`; T1's `chats` with their
 * messages and live text) in a database of its
 * own on the bench's MongoDB server, with the index a team would add (the key's hash, unique). The API, the worker
 * and the bench's seeding share these shapes.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

export interface KeyDoc {
  _id: string;
  owner_id: string;
  hash: string;
}

export interface WorkflowDoc {
  _id: string;
  owner_id: string;
  name: string;
  /** Each step one GET of `url`, as Stepwise's `http_request` step with only a URL. */
  steps: { url: string }[];
}

export interface RunDoc {
  _id: string;
  owner_id: string;
  workflow_id: string;
  status: 'queued' | 'completed' | 'failed';
  input: unknown;
  output?: unknown;
  error?: string;
  created_at: Date;
  ended_at?: Date;
}

/** T1's reference: a chat, its messages (`<chat>:<turn>:<pos>`) and its live text (`<chat>:<turn>:<n>`). */
export interface ChatDoc {
  _id: string;
  owner_id: string;
  turns: number;
}

export interface ChatMessageDoc {
  _id: string;
  chat_id: string;
  turn: number;
  role: 'user' | 'assistant';
  text: string;
}

export interface ChatDeltaDoc {
  _id: string;
  chat_id: string;
  text: string;
}

export const chats = (db: Db): Collection<ChatDoc> => db.collection<ChatDoc>('chats');
export const chatMessages = (db: Db): Collection<ChatMessageDoc> => db.collection<ChatMessageDoc>('chat_messages');
export const chatDeltas = (db: Db): Collection<ChatDeltaDoc> => db.collection<ChatDeltaDoc>('chat_deltas');

export const keys = (db: Db): Collection<KeyDoc> => db.collection<KeyDoc>('keys');
export const workflows = (db: Db): Collection<WorkflowDoc> => db.collection<WorkflowDoc>('workflows');
export const runs = (db: Db): Collection<RunDoc> => db.collection<RunDoc>('runs');

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** One owner, one key and one workflow of `urls.length` GETs; returns the key's plaintext and the workflow's id. */
export async function seed(db: Db, urls: string[]): Promise<{ key: string; workflowId: string }> {
  await keys(db).createIndex({ hash: 1 }, { unique: true });
  const owner = randomUUID();
  const key = `hw_${randomBytes(24).toString('hex')}`;
  await keys(db).insertOne({ _id: randomUUID(), owner_id: owner, hash: hashKey(key) });
  const workflowId = randomUUID();
  await workflows(db).insertOne({
    _id: workflowId,
    owner_id: owner,
    name: 'bench hand-written',
    steps: urls.map((url) => ({ url })),
  });
  return { key, workflowId };
}
