/**
 * `updateMemory`: the agent's `update_memory` tool in a thread turn whose template has a memory schema (decision
 * 0601). Handled as a thread tool with its own activity rather than a registry tool: it needs the database and the
 * thread, which no built-in tool gets. The call's JSON merge patch is applied to the current memory and the result
 * validated against the schema; an invalid one changes nothing and the model is told why in the tool result. A
 * retried call finds the version it wrote (keyed by the run and the result's seq) instead of writing another.
 */
import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { findCallVersion } from '../../../db/thread-memory';
import type { JsonObject } from '../../../domain/json';
import { THREAD_STEP_ID, type ThreadRef } from '../../../domain/thread';
import { mergePatch } from '../../../domain/thread-memory';
import { changeMemory } from '../../../shared/threads/memory';
import { recordedToolCall, writeToolResult, type ToolResult } from './recorded-call';
import type { CallToolInput, CallToolResult } from './types';

export interface UpdateMemoryInput extends CallToolInput {
  thread: ThreadRef;
}

export function createUpdateMemoryActivity(deps: { db: Db }) {
  return async function updateMemory(req: UpdateMemoryInput): Promise<CallToolResult> {
    const attempt = Context.current().info.attempt;
    const call = await recordedToolCall(deps.db, req);
    // A workflow's agent step in a thread (decision 0603) is one of several steps of its run: its step is in the key.
    const key = req.step_id === THREAD_STEP_ID ? `${req.run_id}:${req.seq}` : `${req.run_id}:${req.step_id}:${req.seq}`;
    const result = await outcome(deps.db, req, key, call.args, call.invalid_args);
    await writeToolResult(deps.db, req, attempt, call, result);
    return { ok: !result.is_error, truncated: false };
  };
}

async function outcome(
  db: Db,
  req: UpdateMemoryInput,
  key: string,
  args: unknown,
  invalidArgs: string | undefined,
): Promise<ToolResult> {
  const error = (message: string): ToolResult => ({ output: { error: message }, is_error: true, truncated: false });
  const done = await findCallVersion(db, req.thread.id, key);
  if (done)
    return { output: { ok: true, version: done.version, memory: done.memory }, is_error: false, truncated: false };
  if (invalidArgs !== undefined) return error(`the arguments are not valid JSON: ${invalidArgs.slice(0, 200)}`);
  const patch = (args as { patch?: unknown } | null)?.patch;
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return error('invalid arguments: `patch` must be a JSON object (a JSON merge patch)');
  }
  const changed = await changeMemory(db, req.thread.id, (current) => mergePatch(current, patch as JsonObject), {
    by: 'agent',
    turn: req.thread.turn,
    call: key,
  });
  if (changed.ok) {
    return {
      output: { ok: true, version: changed.version, memory: changed.memory },
      is_error: false,
      truncated: false,
    };
  }
  if (changed.kind === 'invalid') {
    return error(`the memory was not changed: the result does not fit its schema (${changed.problems.join('; ')})`);
  }
  return error(changed.kind === 'gone' ? 'the thread is gone' : 'this thread has no working memory');
}
