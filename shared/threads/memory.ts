/**
 * Changing a thread's working memory (decision 0601), the one way both the API (the user's PUT) and the worker (the
 * agent's `update_memory` tool) do it: the new document must fit the thread's memory schema — else nothing changes
 * and the problems say why — and becomes the next version by compare-and-set (db/thread-memory.ts), computed again
 * from the current memory when another change got there first.
 */
import type { Db } from 'mongodb';
import { writeMemory } from '../../db/thread-memory';
import { findThread, type ThreadDoc } from '../../db/threads';
import type { JsonObject, JsonValue } from '../../domain/json';
import { compileUserSchema, describeInputErrors } from '../../domain/user-schema';

export type MemoryChange =
  | { ok: true; memory: JsonObject; version: number }
  | { ok: false; kind: 'invalid'; problems: string[] }
  | { ok: false; kind: 'no_memory' | 'gone' };

/** Why `value` is not a memory the schema takes (empty when it is). */
export function memoryProblems(schema: JsonObject, value: JsonValue): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ['memory: must be a JSON object'];
  const validate = compileUserSchema(schema);
  if (validate(value)) return [];
  return describeInputErrors(validate.errors).map((p) => p.replace(/^input/, 'memory'));
}

export async function changeMemory(
  db: Db,
  threadId: string,
  next: (current: JsonObject) => JsonValue,
  source: { by: 'user' | 'agent'; turn: number | null; call: string | null; ownerId?: string },
): Promise<MemoryChange> {
  for (;;) {
    const t: ThreadDoc | null = await findThread(db, threadId);
    if (!t || t.deleting || (source.ownerId !== undefined && t.owner_id !== source.ownerId)) {
      return { ok: false, kind: 'gone' };
    }
    if (!t.memory_schema) return { ok: false, kind: 'no_memory' };
    const value = next(t.memory ?? {});
    const problems = memoryProblems(t.memory_schema, value);
    if (problems.length > 0) return { ok: false, kind: 'invalid', problems };
    const memory = value as JsonObject;
    const written = await writeMemory(db, {
      threadId: t._id,
      ownerId: t.owner_id,
      from: t.memory_version ?? 0,
      memory,
      by: source.by,
      turn: source.turn,
      call: source.call,
    });
    if (written.ok) return { ok: true, memory, version: written.version };
    if (written.reason === 'gone') return { ok: false, kind: 'gone' };
  }
}
