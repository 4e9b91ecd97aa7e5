/**
 * Whether a streamed answer reached its end. A body that ends cleanly part-way (a server or proxy closing a
 * connection without chunked framing, a buffer cut at its limit) looks to the AI SDK like a whole answer with an
 * `unknown` finish: taken as it is, the step would complete on half an answer. The end is the API's own marker, seen in
 * the raw chunks: a choice's `finish_reason` (OpenAI chat completions, whatever value a server puts there) or the
 * Anthropic `message_stop` / `message_delta` with a `stop_reason`. The SDK's mapped finish reason cannot tell, as it
 * maps both "no finish chunk" and "a finish reason it does not know" to `unknown`.
 */
import type { ApiFormat } from './unstreamed-answer';

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** True when the raw chunk (the parsed JSON of one event) marks the end of the answer. */
export function endsAnswer(api: ApiFormat, rawChunk: unknown): boolean {
  const chunk = record(rawChunk);
  if (!chunk) return false;
  if (api === 'anthropic') {
    if (chunk.type === 'message_stop') return true;
    return chunk.type === 'message_delta' && record(chunk.delta)?.stop_reason != null;
  }
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  return choices.some((c) => record(c)?.finish_reason != null);
}
