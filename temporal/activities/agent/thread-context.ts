/**
 * A thread turn's context (docs/threads.md): the earlier turns that fit the window, read from the thread's messages
 * (db/thread-messages.ts) on every model call of the turn — in the same round trip as the call's other reads — and
 * put between the system prompt and the turn's own transcript. Whole turns only, newest first, so a tool call is
 * never separated from its result; a turn that did not complete gives only its user message (its answer may stop
 * at a tool call without a result, which providers refuse).
 */
import type { Db } from 'mongodb';
import { readEarlierMessages, type ThreadMessageDoc } from '../../../db/thread-messages';
import type { TranscriptEntry } from '../../../db/transcripts';
import { estimateTokens, type ThreadRef } from '../../../domain/thread';

/** The most messages one read takes: far more than any window holds (each message counts at least one token). */
export const CONTEXT_READ_LIMIT = 1000;

export async function readThreadContext(db: Db, thread: ThreadRef): Promise<TranscriptEntry[]> {
  const docs = await readEarlierMessages(db, thread.id, thread.turn, CONTEXT_READ_LIMIT);
  return fitContext(docs, thread.context_tokens, docs.length === CONTEXT_READ_LIMIT);
}

/**
 * The turns of `newestFirst` that fit `tokens`, oldest first, as transcript entries. `cut`: the read stopped at its
 * limit, so the oldest turn read may be partial and is left out.
 */
export function fitContext(newestFirst: ThreadMessageDoc[], tokens: number, cut: boolean): TranscriptEntry[] {
  const turns: ThreadMessageDoc[][] = [];
  for (const doc of newestFirst) {
    const last = turns[turns.length - 1];
    if (last && last[0]?.turn === doc.turn) last.push(doc);
    else turns.push([doc]);
  }
  if (cut) turns.pop();
  const kept: TranscriptEntry[][] = [];
  let used = 0;
  for (const group of turns) {
    const entries = turnEntries(group.reverse());
    const cost = entries.reduce((sum, e) => sum + entryTokens(e), 0);
    if (used + cost > tokens) break;
    used += cost;
    kept.push(entries);
  }
  return kept.reverse().flat();
}

/** One turn's messages (oldest first) as the entries the model is given. */
function turnEntries(messages: ThreadMessageDoc[]): TranscriptEntry[] {
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
