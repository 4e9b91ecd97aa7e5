/**
 * Threads: durable conversations with one agent (docs/threads.md, decision 0600). A thread's turns are ordinary runs;
 * these are the types and limits both the API and the worker apply. Workflow-safe: types and pure constants only.
 */

/** The largest user message a thread takes (UTF-8 bytes of `text`): a ~8 000-token message; larger ones are a 413. */
export const MAX_THREAD_MESSAGE_BYTES = 32 * 1024;

/** How many tokens of earlier turns a turn's model call is given when the template sets no `context_tokens`. */
export const DEFAULT_CONTEXT_TOKENS = 16_000;

/** The id of the agent step of every turn run (its transcript's `step_id`). */
export const THREAD_STEP_ID = 'chat';

/** What to do with a message sent while a turn runs (or others wait): refuse it (409) or run it after them. */
export type MessagePolicy = 'reject' | 'enqueue';

/** Which thread and turn an agent step answers: carried by the turn run's snapshot, never the conversation. */
export interface ThreadRef {
  id: string;
  /** 1-based turn number: the user message of this turn opens the step. */
  turn: number;
  /** How many tokens of earlier turns may go into the model's context. */
  context_tokens: number;
  /**
   * Turns up to this one are covered by the thread's latest summary when the turn started (decision 0601; absent: 0):
   * the turn's context is read from the turn after it, so the read is bounded by the window, not the thread's length.
   */
  after_turn?: number;
}

/** A thread's spending limits (each optional): per turn (the turn run's budget) and over the thread's life. */
export interface ThreadBudget {
  turn_max_tokens?: number;
  turn_max_model_calls?: number;
  /** Input + output tokens of every turn together; a turn is refused once the thread has used this many. */
  max_tokens?: number;
}

/**
 * Tokens a text counts for when the context window is filled: about four characters a token, as the provider-neutral
 * estimate (temporal/llm/usage-estimate.ts) counts. An estimate on purpose: the window only needs to be safely small.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * A message's public id within its thread: `m<turn>.<pos>` (pos 0 is the turn's user message); an approval message
 * `m<turn>.<pos>a<call index>` (the approval of that call of the assistant message at `pos`).
 */
export function threadMessageId(turn: number, pos: number, approval?: number): string {
  return approval === undefined ? `m${turn}.${pos}` : `m${turn}.${pos}a${approval}`;
}

/** The turn and position (and approval) a public message id names, or null when it is not one. */
export function parseThreadMessageId(id: string): { turn: number; pos: number; approval?: number } | null {
  const m = /^m([1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,5})(?:a(0|[1-9][0-9]{0,2}))?$/.exec(id);
  if (!m) return null;
  return { turn: Number(m[1]), pos: Number(m[2]), ...(m[3] !== undefined ? { approval: Number(m[3]) } : {}) };
}
