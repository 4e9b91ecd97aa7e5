/**
 * The one small interface every provider adapter implements, and the provider-neutral message format the agent loop
 * stores in its transcript (MongoDB) and rebuilds each turn. Nothing here carries a key or a base URL.
 */
import type { JsonObject, JsonValue } from '../contract/json';

export type ProviderName = 'openai' | 'anthropic' | 'compat';

/** A parsed `provider:model` string. */
export interface ModelRef {
  provider: ProviderName;
  name: string;
}

/** A tool as the model sees it: the JSON Schema comes from the tool's zod schema. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

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
}

export interface GenerateRequest {
  system: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  temperature?: number;
  maxOutputTokens?: number;
  /** Aborts the HTTP call (activity cancellation). */
  signal?: AbortSignal;
}

export interface GenerateResult {
  text: string | null;
  toolCalls: LlmToolCall[];
  usage: TokenUsage;
  /** The SDK's finish reason: `stop`, `tool-calls`, `length`, `content-filter`, `error`, `other`, `unknown`. */
  finishReason: string;
  /** The SDK's call warnings (unsupported settings, unknown model limits), for the structured log. */
  warnings: string[];
}

/** One model call, nothing more: no retries (Temporal retries the activity) and no tool execution. */
export interface LlmProvider {
  readonly ref: ModelRef;
  generate(request: GenerateRequest): Promise<GenerateResult>;
}
