/**
 * A thread turn's context (docs/threads.md): the earlier turns that fit the window, read from the thread's messages
 * (db/thread-messages.ts) on every model call of the turn — in the same round trip as the call's other reads — and
 * put between the system prompt and the turn's own transcript. Whole turns only, newest first, so a tool call is
 * never separated from its result; a turn that did not complete gives only its user message (its answer may stop
 * at a tool call without a result, which providers refuse). Turns a compaction summarised (decision 0601) are
 * replaced by the latest summary, read by index in the same round trip.
 */
import type { Db } from 'mongodb';
import { latestSummary, readEarlierMessages, type ThreadMessageDoc } from '../../../db/thread-messages';
import type { TranscriptEntry } from '../../../db/transcripts';
import { threadsCollection } from '../../../db/threads';
import type { JsonObject } from '../../../domain/json';
import { UPDATE_MEMORY_TOOL } from '../../../domain/thread-memory';
import { estimateTokens, type ThreadRef } from '../../../domain/thread';

/** The most messages one read takes: far more than any window holds (each message counts at least one token). */
export const CONTEXT_READ_LIMIT = 1000;

/** What a turn's model call is given of the thread besides its own transcript. */
export interface ThreadContext {
  /** The recent turns that fit the window (after the summary's turns), oldest first. */
  entries: TranscriptEntry[];
  /** The latest summary of the turns before them (decision 0601), or null. */
  summary: ThreadMessageDoc | null;
  /** The working memory and its schema, when the thread has one. */
  memory: { schema: JsonObject; value: JsonObject } | null;
}

/** The thread's window as the read gives it: the recent messages (newest first) and the latest summary. */
export interface ThreadWindow {
  docs: ThreadMessageDoc[];
  summary: ThreadMessageDoc | null;
  /** The read stopped at its limit (the oldest turn read may be partial). */
  cut: boolean;
}

/**
 * Two indexed reads in parallel, bounded whatever the thread's length: the latest summary, and the messages after
 * the turns it covered when the turn started (`after_turn`) — about a window's worth, since compaction keeps the
 * turns after the latest summary within the window.
 */
export async function readThreadWindow(db: Db, thread: ThreadRef): Promise<ThreadWindow> {
  const range = { afterTurn: thread.after_turn ?? 0, turn: thread.turn };
  const [docs, summary] = await Promise.all([
    readEarlierMessages(db, thread.id, range, CONTEXT_READ_LIMIT),
    latestSummary(db, thread.id, thread.turn),
  ]);
  return { docs, summary, cut: docs.length === CONTEXT_READ_LIMIT };
}

export async function readThreadContext(db: Db, thread: ThreadRef): Promise<ThreadContext> {
  const [w, t] = await Promise.all([
    readThreadWindow(db, thread),
    threadsCollection(db).findOne({ _id: thread.id }, { projection: { memory: 1, memory_schema: 1 } }),
  ]);
  const memory = t?.memory_schema ? { schema: t.memory_schema, value: t.memory ?? {} } : null;
  // The memory takes room in the window as the summary does.
  const room = Math.max(
    windowRoom(thread.context_tokens, w.summary) - (memory ? estimateTokens(JSON.stringify(memory.value)) : 0),
    0,
  );
  return { entries: fitContext(w.docs, room, w.cut, w.summary?.summary?.to_turn ?? 0), summary: w.summary, memory };
}

/** What a turn's system prompt is followed by: the working memory, then the summary of older turns. */
export function threadSystemText(context: Pick<ThreadContext, 'summary' | 'memory'>): string {
  const parts: string[] = [];
  if (context.memory) {
    parts.push(
      `Working memory of this conversation (JSON; change it with the ${UPDATE_MEMORY_TOOL} tool; its JSON Schema: ` +
        `${JSON.stringify(context.memory.schema)}):\n${JSON.stringify(context.memory.value)}`,
    );
  }
  const s = context.summary;
  if (s?.summary) {
    parts.push(
      `Summary of the earlier conversation (turns ${s.summary.from_turn}–${s.summary.to_turn}):\n${s.text ?? ''}`,
    );
  }
  return parts.join('\n\n');
}

/** The tokens left for recent turns once the summary is in the context. */
export function windowRoom(contextTokens: number, summary: ThreadMessageDoc | null): number {
  return Math.max(contextTokens - (summary ? estimateTokens(summary.text ?? '') : 0), 0);
}

/**
 * The turns of `newestFirst` that fit `tokens`, oldest first, as transcript entries. `cut`: the read stopped at its
 * limit, so the oldest turn read may be partial and is left out. `after`: turns up to it are summarised (left out).
 */
export function fitContext(
  newestFirst: ThreadMessageDoc[],
  tokens: number,
  cut: boolean,
  after = 0,
): TranscriptEntry[] {
  return splitTurns(newestFirst, tokens, cut, after).fit;
}

/**
 * Splits the turns after `after` into those that fit `tokens` (the newest, as entries, oldest first) and the older
 * ones that do not (their messages, oldest turn first): what a compaction summarises.
 */
export function splitTurns(
  newestFirst: ThreadMessageDoc[],
  tokens: number,
  cut: boolean,
  after: number,
): { fit: TranscriptEntry[]; rest: ThreadMessageDoc[][] } {
  const turns: ThreadMessageDoc[][] = [];
  for (const doc of newestFirst) {
    if (doc.role === 'summary') continue;
    const last = turns[turns.length - 1];
    if (last && last[0]?.turn === doc.turn) last.push(doc);
    else turns.push([doc]);
  }
  if (cut) turns.pop();
  const recent = turns.filter((group) => (group[0]?.turn ?? 0) > after).map((group) => [...group].reverse());
  const kept: TranscriptEntry[][] = [];
  let used = 0;
  let i = 0;
  for (; i < recent.length; i++) {
    const entries = turnEntries(recent[i]!);
    const cost = entries.reduce((sum, e) => sum + entryTokens(e), 0);
    if (used + cost > tokens) break;
    used += cost;
    kept.push(entries);
  }
  return { fit: kept.reverse().flat(), rest: recent.slice(i).reverse() };
}

/**
 * One turn's messages (oldest first) as the entries the model is given. Approval messages are not among them: the model
 * hears of a declined call in the call's result (db/thread-approvals.ts).
 */
export function turnEntries(messages: ThreadMessageDoc[]): TranscriptEntry[] {
  const user = messages.find((m) => m.role === 'user');
  const completed = user?.status === 'completed';
  const entries: TranscriptEntry[] = [];
  for (const m of messages) {
    if (m.role === 'user') entries.push({ kind: 'user', text: m.text ?? '', repair: false });
    else if (!completed) continue;
    else if (m.role === 'assistant') {
      entries.push({
        kind: 'assistant',
        turn: 0,
        text: m.text,
        tool_calls: m.tool_calls ?? [],
        usage: { input_tokens: 0, output_tokens: 0 },
        finish_reason: 'stop',
        final: m.final === true,
      });
    } else if (m.tool) {
      entries.push({
        kind: 'tool',
        turn: 0,
        call_id: m.tool.call_id,
        name: m.tool.name,
        args: m.tool.args,
        output: m.tool.output,
        is_error: m.tool.is_error,
        truncated: false,
      });
    }
  }
  return entries;
}

function entryTokens(e: TranscriptEntry): number {
  switch (e.kind) {
    case 'user':
      return estimateTokens(e.text) + 1;
    case 'assistant':
      return estimateTokens((e.text ?? '') + (e.tool_calls.length > 0 ? JSON.stringify(e.tool_calls) : '')) + 1;
    case 'tool':
      return estimateTokens(JSON.stringify(e.output)) + 1;
    case 'setup':
      return 0;
  }
}
