/**
 * The provider-neutral messages of an agent step, as the transcript stores them (db/transcripts.ts) and the agent
 * activities rebuild each turn (temporal/llm). Types only.
 */
import type { JsonValue } from './json';

export interface LlmToolCall {
  id: string;
  name: string;
  /** Parsed arguments; `{}` when the model's arguments were not valid JSON (then `invalid_args` holds the raw text). */
  args: JsonValue;
  invalid_args?: string;
}

export interface LlmToolResult {
  call_id: string;
  name: string;
  /** Handed back to the model as data (JSON), never as instructions. */
  output: JsonValue;
  is_error: boolean;
}

export type LlmMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string | null; tool_calls: LlmToolCall[] }
  | { role: 'tool'; results: LlmToolResult[] };

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  /** The provider reported no usage: the counts are Stepwise's estimate (temporal/llm/usage-estimate.ts). */
  estimated?: true;
}
