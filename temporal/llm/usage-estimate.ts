/**
 * Token counts for a call whose provider reported none (a stream without its usage chunk: Stepwise asks for one, not
 * every OpenAI-compatible server sends it). Counting 0 would let such calls run past every token budget, so the
 * missing counts are estimated — one token per CHARS_PER_TOKEN characters, rounded up, of what was sent (system
 * prompt, conversation, tool declarations, as JSON) and of what came back (the text, the tool calls' names and
 * arguments) — and the usage says so (`estimated: true`, docs/runs.md "Token usage"). A count the provider did report is
 * kept as it is; a count of 0 where there was something to count (every call sends a prompt; an answer with text or
 * tool calls has output) is a server filling the field without counting, and is estimated too.
 */
import type { GenerateRequest, LlmToolCall, TokenUsage } from './types';

/** A common rule of thumb for English text and code with the usual tokenizers; JSON's punctuation errs on the high side. */
export const CHARS_PER_TOKEN = 4;

function tokensFor(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Characters of everything the call sent. */
export function promptChars(request: Pick<GenerateRequest, 'system' | 'messages' | 'tools'>): number {
  return request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
}

/** Characters of the answer: its text and its tool calls (names and arguments as sent). */
export function answerChars(text: string | null, toolCalls: readonly LlmToolCall[]): number {
  let chars = text?.length ?? 0;
  for (const call of toolCalls) chars += call.name.length + (call.invalid_args ?? JSON.stringify(call.args)).length;
  return chars;
}

/** The provider's counts where it gave them, estimates for the rest (then marked `estimated`). */
export function reportedOrEstimated(
  reported: { inputTokens: number | undefined; outputTokens: number | undefined },
  request: Pick<GenerateRequest, 'system' | 'messages' | 'tools'>,
  answer: { text: string | null; toolCalls: readonly LlmToolCall[] },
): TokenUsage {
  const outChars = answerChars(answer.text, answer.toolCalls);
  const inputTokens = reported.inputTokens || undefined;
  const outputTokens = reported.outputTokens === 0 && outChars > 0 ? undefined : reported.outputTokens;
  if (inputTokens !== undefined && outputTokens !== undefined) {
    return { input_tokens: inputTokens, output_tokens: outputTokens };
  }
  return {
    input_tokens: inputTokens ?? tokensFor(promptChars(request)),
    output_tokens: outputTokens ?? tokensFor(outChars),
    estimated: true,
  };
}
