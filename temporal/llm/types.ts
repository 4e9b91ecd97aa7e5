/**
 * The one small interface every provider adapter implements, and the provider-neutral message format (domain/transcript.ts)
 * the agent loop stores in its transcript (MongoDB) and rebuilds each turn. Nothing here carries a key or a base URL.
 */
import type { JsonObject } from '../../domain/json';
import type { LlmMessage, LlmToolCall, TokenUsage } from '../../domain/transcript';
import type { LlmProviderName } from '../../shared/llm-providers';

/** A parsed `provider:model` string. */
export interface ModelRef {
  provider: LlmProviderName;
  name: string;
}

/** A tool as the model sees it: the JSON Schema comes from the tool's zod schema. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

export type { LlmMessage, LlmToolCall, LlmToolResult, TokenUsage } from '../../domain/transcript';

export interface GenerateRequest {
  system: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  temperature?: number;
  maxOutputTokens?: number;
  /** Aborts the HTTP call (activity cancellation). */
  signal?: AbortSignal;
  /** Receives the answer's text as it is generated, piece by piece (the whole text is in the result as well). */
  onText?: (text: string) => void;
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
