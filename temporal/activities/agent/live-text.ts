/**
 * The live text of one model-call attempt, written to the run's event log while the model generates it
 * (db/text-deltas.ts). The first text of an attempt goes out at once: it is what a reader waits for (the time to the
 * first token), and a model's later text comes at its own pace. After it, batched: a batch goes out LIVE_TEXT_FLUSH_MS
 * after its first character or once it holds LIVE_TEXT_BATCH_CHARS, whichever comes first — one more write per call
 * than batching the first text too. One write at a time, in order; text that arrives meanwhile joins the next batch,
 * so a slow database means fewer, larger writes (never more than LIVE_TEXT_BATCH_CHARS each), not a queue of them. What is left when the call ends is not written here: finish() hands it back as events, and the call's own
 * write after the answer logs them ahead of the turn's event (one write where two would follow each other).
 *
 * Best effort on purpose: live text is a preview, the transcript is authoritative. A failed write is logged and ends
 * this attempt's live text; it never fails the model call.
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { NewRunEvent } from '../../../db/run-events';
import {
  appendLiveText,
  earlierAttemptStreamed,
  textDeltaEvent,
  textVoidEvent,
  type TextStreamKey,
} from '../../../db/text-deltas';

/** About the pace of a person reading along, at a write per batch. */
export const LIVE_TEXT_FLUSH_MS = 75;
/** A batch's most characters (UTF-16 units): 2 KiB of ASCII; an event stays small whatever the model's speed. */
export const LIVE_TEXT_BATCH_CHARS = 2048;

export interface LiveText {
  /** New characters from the model. */
  push(text: string): void;
  /**
   * Ends the text: waits for the write in flight and returns what is left as events (none when the live text broke),
   * for the caller to log with its next write, before anything else of the call.
   */
  finish(): Promise<NewRunEvent[]>;
  /** The call failed: drops what is not written yet and waits for the write in flight. */
  abandon(): Promise<void>;
}

export interface LiveTextDeps {
  db: Db;
  log: Logger;
  retentionMs: number;
}

/** The longest prefix of at most `max` units that does not split a surrogate pair. */
function cut(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/**
 * Starts the live text of an attempt. A retried attempt whose predecessors logged text first logs the void (before
 * any of its own text), so a reader discards the partial text it holds.
 */
export function openLiveText(deps: LiveTextDeps, key: TextStreamKey): LiveText {
  const expiresAt = () => new Date(Date.now() + deps.retentionMs);
  let buffer = '';
  let n = 0;
  let due = false;
  let closing = false;
  let broken = false;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;

  const fail = (err: unknown) => {
    if (!broken) deps.log.warn({ err }, 'could not log live text; the transcript will have the answer');
    broken = true;
    buffer = '';
  };
  const ready = (async () => {
    if (await earlierAttemptStreamed(deps.db, key)) await appendLiveText(deps.db, key, textVoidEvent(key, expiresAt()));
  })().catch(fail);

  const schedule = () => {
    if (timer || due || closing || buffer === '') return;
    timer = setTimeout(() => {
      timer = undefined;
      due = true;
      kick();
    }, LIVE_TEXT_FLUSH_MS);
  };
  const pump = async () => {
    await ready;
    while (!broken && !closing && buffer !== '' && due) {
      const size = cut(buffer, LIVE_TEXT_BATCH_CHARS);
      const piece = buffer.slice(0, size);
      buffer = buffer.slice(size);
      due = buffer.length >= LIVE_TEXT_BATCH_CHARS;
      try {
        await appendLiveText(deps.db, key, textDeltaEvent(key, n++, piece, expiresAt()));
      } catch (err) {
        fail(err);
      }
    }
    schedule();
  };
  const kick = () => {
    writing ??= pump().finally(() => {
      writing = undefined;
      // Text that came while the last write ended, with its batch already due.
      if (!broken && !closing && buffer !== '' && due) kick();
    });
  };
  const settle = async () => {
    await ready;
    while (writing) await writing;
  };

  return {
    push(text) {
      if (broken || closing || text === '') return;
      buffer += text;
      // The first text, or a full batch: due now.
      if (n === 0 || buffer.length >= LIVE_TEXT_BATCH_CHARS) due = true;
      if (due) kick();
      else schedule();
    },
    async finish() {
      closing = true;
      clearTimeout(timer);
      timer = undefined;
      await settle();
      const tail: NewRunEvent[] = [];
      for (let at = 0; !broken && at < buffer.length;) {
        const size = cut(buffer.slice(at), LIVE_TEXT_BATCH_CHARS);
        tail.push(textDeltaEvent(key, n++, buffer.slice(at, at + size), expiresAt()));
        at += size;
      }
      buffer = '';
      return tail;
    },
    async abandon() {
      closing = true;
      broken = true;
      buffer = '';
      clearTimeout(timer);
      timer = undefined;
      await settle();
    },
  };
}
