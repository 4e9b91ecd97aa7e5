/**
 * `compactThread`: a thread turn's compaction (decision 0601), one activity before the turn's first model call. When
 * the turns after the latest summary no longer fit the template's `context_tokens`, one model call summarises the
 * oldest of them (together with the previous summary) into a new `summary` message, so that the turns left fill at
 * most half the window and the next compactions are rare. The raw messages stay. The summary's `_id` is the turn's
 * (pos 1), written only if absent: a retried attempt never writes a second one, and finds the first one's usage.
 * Its tokens count against the owner's day (keyed like a model call) and, through the result, the turn's budget.
 */
import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import { putSummary, SUMMARY_POS, threadMessageDocId, type ThreadMessageDoc } from '../../../db/thread-messages';
import { toLlmMessages, type TranscriptEntry } from '../../../db/transcripts';
import { threadsCollection } from '../../../db/threads';
import { callOrigin, countCall, earlierCount, tokensUsedOn } from '../../../db/usage';
import type { ThreadRef } from '../../../domain/thread';
import { createLlmProvider } from '../../llm/provider';
import { NonRetryableError } from '../../failures';
import { assertDailyBudget } from './conversation';
import { readThreadWindow, splitTurns, turnEntries, windowRoom } from './thread-context';
import type { CallUsage } from './types';

export interface CompactThreadInput {
  run_id: string;
  step_id: string;
  owner_id: string;
  /** The step's model (`provider:model`): it writes the summary. */
  model: string;
  thread: ThreadRef;
  timeout_ms: number;
}

export interface CompactThreadResult {
  /** The compaction call's usage (counted against the turn's budget), or null when no call was needed. */
  usage: CallUsage | null;
  /** The turns the summary covers. */
  covers?: { from_turn: number; to_turn: number };
}

export const COMPACTION_SYSTEM =
  'You summarise the earlier part of a conversation between a user and an assistant so that the assistant can ' +
  'continue it without the full text. Keep facts, names, numbers, decisions, preferences, open questions and ' +
  'anything the user asked to be remembered; drop pleasantries. Answer with the summary only, in plain text.';

export function createCompactThreadActivity(deps: { config: Config; db: Db; logger: Logger }) {
  return async function compactThread(req: CompactThreadInput): Promise<CompactThreadResult> {
    const ctx = Context.current();
    const log = deps.logger.child({ run_id: req.run_id, thread_id: req.thread.id, turn: req.thread.turn });
    const w = await readThreadWindow(deps.db, req.thread);
    const prev = w.summary;
    // A previous attempt of this turn wrote it: the same result, counted once by the workflow.
    if (prev?.turn === req.thread.turn && prev.summary) return resultOf(prev);
    const room = windowRoom(req.thread.context_tokens, prev);
    const after = prev?.summary?.to_turn ?? 0;
    if (splitTurns(w.docs, room, w.cut, after).rest.length === 0) return { usage: null };
    const old = splitTurns(w.docs, Math.floor(room / 2), w.cut, after).rest;
    const first = old[0]?.[0]?.turn;
    const last = old[old.length - 1]?.[0]?.turn;
    if (first === undefined || last === undefined) return { usage: null };
    assertDailyBudget(deps.config, await tokensUsedOn(deps.db, req.owner_id, new Date()));

    const from = prev?.summary?.from_turn ?? first;
    const prompt = compactionPrompt(prev, old, first, last);
    const provider = createLlmProvider(deps.config, req.model, { timeoutMs: req.timeout_ms });
    const timer = setInterval(() => ctx.heartbeat(), 2_000);
    const result = await provider
      .generate({
        system: COMPACTION_SYSTEM,
        messages: toLlmMessages([{ kind: 'user', text: prompt, repair: false }]),
        tools: [],
        maxOutputTokens: Math.max(Math.floor(req.thread.context_tokens / 4), 64),
        signal: ctx.cancellationSignal,
      })
      .finally(() => clearInterval(timer));
    if (!result.text?.trim())
      throw new NonRetryableError('llm_invalid_response', 'the compaction call answered no text');
    const doc: ThreadMessageDoc = {
      _id: threadMessageDocId(req.thread.id, req.thread.turn, SUMMARY_POS),
      thread_id: req.thread.id,
      owner_id: req.owner_id,
      turn: req.thread.turn,
      pos: SUMMARY_POS,
      role: 'summary',
      text: result.text.trim(),
      summary: {
        from_turn: from,
        to_turn: last,
        model: req.model,
        usage: result.usage,
        request: { system: COMPACTION_SYSTEM, prompt },
      },
      created_at: new Date(),
    };
    const kept = await putSummary(deps.db, doc);
    const usage = kept.summary?.usage ?? result.usage;
    const callKey = `${req.run_id}:${req.step_id}:summary`;
    await Promise.all([
      // Keyed by the turn's run and the summary's place: every attempt of this compaction has the same key.
      countCall(
        deps.db,
        {
          ownerId: req.owner_id,
          callKey,
          at: new Date(ctx.info.scheduledTimestampMs),
          model: req.model,
          origin: await callOrigin(deps.db, req.run_id, req.step_id, req.thread.id),
          input_tokens: usage.input_tokens,
          output_tokens: usage.output_tokens,
        },
        earlierCount(deps.db, { ownerId: req.owner_id, callKey, attempt: ctx.info.attempt }),
      ),
      // The summary's place for the next turns' reads (never moved back), and the message it adds when it is new. A
      // retry whose first attempt wrote the summary writes the mark again: that attempt may have stopped before it.
      threadsCollection(deps.db).updateOne(
        { _id: req.thread.id },
        {
          $max: { summarized_to: kept.summary?.to_turn ?? 0 },
          ...(kept === doc ? { $inc: { message_count: 1 } } : {}),
        },
      ),
    ]);
    log.info({ from_turn: from, to_turn: last, usage }, 'thread compacted');
    return resultOf(kept);
  };
}

function resultOf(doc: ThreadMessageDoc): CompactThreadResult {
  const s = doc.summary!;
  return { usage: s.usage, covers: { from_turn: s.from_turn, to_turn: s.to_turn } };
}

/** The previous summary and the turns to add, as one text (tool calls as one line each). */
export function compactionPrompt(
  prev: ThreadMessageDoc | null,
  turns: ThreadMessageDoc[][],
  first: number,
  last: number,
): string {
  const parts: string[] = [];
  if (prev?.summary) {
    parts.push(`The summary so far (turns ${prev.summary.from_turn}–${prev.summary.to_turn}):\n${prev.text ?? ''}`);
  }
  const lines = turns.flatMap((group) => turnEntries(group).map(lineOf));
  parts.push(`The conversation to add (turns ${first}–${last}):\n${lines.join('\n')}`);
  parts.push('Write the updated summary of the whole conversation so far.');
  return parts.join('\n\n');
}

function lineOf(e: TranscriptEntry): string {
  switch (e.kind) {
    case 'user':
      return `user: ${e.text}`;
    case 'assistant': {
      const calls = e.tool_calls.map((c) => `[calls ${c.name}(${JSON.stringify(c.args)})]`).join(' ');
      return `assistant: ${[e.text ?? '', calls].filter(Boolean).join(' ')}`;
    }
    case 'tool':
      return `tool ${e.name}: ${JSON.stringify(e.output)}`;
    case 'setup':
      return '';
  }
}
