/**
 * The transcript of an agent step: one document per entry (the setup, the user message, each model turn, each tool
 * result, each repair message), keyed by (run, step, seq) under a unique index. Activities write their own entry at a
 * seq the workflow chose, with an upsert, so a retried attempt overwrites its entry instead of adding one; the model
 * call rebuilds the message list from here, which keeps Temporal payloads small however long the conversation grows.
 */
import type { McpToolDefinition } from '../domain/mcp';
import { loadedSchema, storedSchema } from './schema-keys';
import type { Db } from 'mongodb';
import type { JsonObject, JsonValue } from '../domain/json';
import type { LlmMessage, LlmToolCall, TokenUsage } from '../domain/transcript';
import type { Usage } from '../domain/run';
import { callUsage, sumUsage } from '../domain/usage';
import type { EgressPolicy } from '../domain/egress';
import { duplicateKeyIndexes, isDuplicateKey } from './duplicate-key';

export type TranscriptEntry =
  /** seq 0: what the step was configured with (the system prompt as sent, after tasks and answer format were added). */
  | {
      kind: 'setup';
      system: string;
      model: string;
      tools: string[];
      output_schema: JsonObject | null;
      max_turns: number;
      temperature?: number;
      max_output_tokens?: number;
      /** The step's egress policy, read by every tool call (absent: DEFAULT_EGRESS). */
      egress?: EgressPolicy;
      /** The MCP tools the model was shown (absent: none), and why some were left out. */
      mcp_tools?: McpToolDefinition[];
      mcp_problems?: string[];
    }
  /** The rendered step input (seq 1), or a repair request after an answer that did not fit the output schema. */
  | { kind: 'user'; text: string; repair: boolean }
  | {
      kind: 'assistant';
      turn: number;
      text: string | null;
      tool_calls: LlmToolCall[];
      usage: TokenUsage;
      finish_reason: string;
      /** Set on the turn that ended the step: the answer as the step output (parsed JSON with an output schema). */
      final: boolean;
    }
  | {
      kind: 'tool';
      turn: number;
      call_id: string;
      name: string;
      args: JsonValue;
      output: JsonValue;
      is_error: boolean;
      /** The failure code when a tool refused or failed (`egress_denied`: the call left the step's allowlist). */
      error_code?: string;
      truncated: boolean;
      /** Answered from this recorded run's transcript (a replayed experiment item): no live call was made. */
      replayed_from_run_id?: string;
    };

export type TranscriptDoc = TranscriptEntry & {
  /** `<run id>:<step id>:<seq>`: the identity that makes a retried write land on the same document. */
  _id: string;
  run_id: string;
  step_id: string;
  seq: number;
  /** Activity attempt that wrote it (a retried attempt overwrites). */
  attempt: number;
  written_at: Date;
};

export function transcriptsCollection(db: Db) {
  return db.collection<TranscriptDoc>('transcripts');
}

/** Seq is zero-padded so that `_id` order is seq order within a step (the transcript endpoint pages by `_id`). */
export function transcriptEntryId(runId: string, stepId: string, seq: number): string {
  return `${runId}:${stepId}:${String(seq).padStart(6, '0')}`;
}

/** A later attempt of the same activity already wrote this entry: the caller is a zombie attempt and must stop. */
export class TranscriptSupersededError extends Error {
  readonly code = 'superseded';
  constructor(id: string, attempt: number) {
    super(`transcript entry ${id} was already written by an attempt after ${attempt}`);
    this.name = 'TranscriptSupersededError';
  }
}

/**
 * Writes (or overwrites) the entry at `seq`: idempotent under retries. Only an equal or later attempt may overwrite,
 * so a slow attempt that Temporal already gave up on (heartbeat timeout) cannot replace what the attempt the workflow
 * accepted wrote — the later tool calls read their arguments from here.
 */
export async function putTranscriptEntry(
  db: Db,
  key: { runId: string; stepId: string; seq: number; attempt: number },
  entry: TranscriptEntry,
): Promise<void> {
  const _id = transcriptEntryId(key.runId, key.stepId, key.seq);
  const doc = storedEntry(key, entry);
  try {
    await transcriptsCollection(db).replaceOne({ _id, attempt: { $lte: key.attempt } }, doc, { upsert: true });
  } catch (err) {
    // The filter missed because a later attempt's entry is there; the upsert then collides on _id.
    if (isDuplicateKey(err)) throw new TranscriptSupersededError(_id, key.attempt);
    throw err;
  }
}

/**
 * Entries at consecutive seqs from `key.seq`, in one bulk write (a step's setup and user message): each upserted as
 * putTranscriptEntry upserts one, and a later attempt's entry is never overwritten.
 */
export async function putTranscriptEntries(
  db: Db,
  key: { runId: string; stepId: string; seq: number; attempt: number },
  entries: TranscriptEntry[],
): Promise<void> {
  const ops = entries.map((entry, i) => {
    const at = { ...key, seq: key.seq + i };
    const _id = transcriptEntryId(key.runId, key.stepId, at.seq);
    return {
      replaceOne: {
        filter: { _id, attempt: { $lte: key.attempt } },
        replacement: storedEntry(at, entry),
        upsert: true,
      },
    };
  });
  try {
    await transcriptsCollection(db).bulkWrite(ops, { ordered: false });
  } catch (err) {
    if (duplicateKeyIndexes(err) === undefined) throw err;
    throw new TranscriptSupersededError(transcriptEntryId(key.runId, key.stepId, key.seq), key.attempt);
  }
}

/** The stored document of an entry (a setup entry's output schema with its keys escaped: db/schema-keys.ts). */
function storedEntry(key: { runId: string; stepId: string; seq: number; attempt: number }, entry: TranscriptEntry) {
  return {
    ...(entry.kind === 'setup' ? { ...entry, output_schema: storedSchema(entry.output_schema) } : entry),
    run_id: key.runId,
    step_id: key.stepId,
    seq: key.seq,
    attempt: key.attempt,
    written_at: new Date(),
  };
}

/** An entry as read back: a setup entry's output schema with its keys as written (db/schema-keys.ts). */
function loaded(doc: TranscriptDoc): TranscriptDoc {
  return doc.kind === 'setup' ? { ...doc, output_schema: loadedSchema(doc.output_schema) } : doc;
}

/** Entries of one step with seq below `beforeSeq` (all when omitted), in order. */
export async function readTranscript(
  db: Db,
  runId: string,
  stepId: string,
  beforeSeq?: number,
): Promise<TranscriptDoc[]> {
  const filter =
    beforeSeq === undefined
      ? { run_id: runId, step_id: stepId }
      : { run_id: runId, step_id: stepId, seq: { $lt: beforeSeq } };
  return (await transcriptsCollection(db).find(filter).sort({ seq: 1 }).toArray()).map(loaded);
}

/** One entry, or null. */
export async function getTranscriptEntry(
  db: Db,
  runId: string,
  stepId: string,
  seq: number,
): Promise<TranscriptDoc | null> {
  const doc = await transcriptsCollection(db).findOne({ _id: transcriptEntryId(runId, stepId, seq) });
  return doc && loaded(doc);
}

/** The final answer of a step, when it has one. */
export async function findFinalEntry(db: Db, runId: string, stepId: string): Promise<TranscriptDoc | null> {
  return transcriptsCollection(db).findOne({ run_id: runId, step_id: stepId, kind: 'assistant', final: true });
}

/** The conversation as the model sees it (setup excluded: it becomes the system prompt). */
export function toLlmMessages(entries: TranscriptEntry[]): LlmMessage[] {
  const messages: LlmMessage[] = [];
  for (const e of entries) {
    switch (e.kind) {
      case 'setup':
        break;
      case 'user':
        messages.push({ role: 'user', text: e.text });
        break;
      case 'assistant':
        messages.push({ role: 'assistant', text: e.text, tool_calls: e.tool_calls });
        break;
      case 'tool': {
        const result = { call_id: e.call_id, name: e.name, output: e.output, is_error: e.is_error };
        const last = messages[messages.length - 1];
        if (last?.role === 'tool') last.results.push(result);
        else messages.push({ role: 'tool', results: [result] });
        break;
      }
    }
  }
  return messages;
}

/** The step's usage over every completed model call recorded in `entries`. */
export function usageOf(entries: TranscriptEntry[]): Usage {
  return sumUsage(entries.flatMap((e) => (e.kind === 'assistant' ? [callUsage(e.usage)] : [])));
}
