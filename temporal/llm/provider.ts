/**
 * The AI SDK behind LlmProvider: one `streamText` call per `generate`, with the SDK's own retries off
 * (`maxRetries: 0` — Temporal's activity retry policy is the one retry layer) and no tool execution (tools are
 * declared without `execute`, so the SDK returns the model's tool calls instead of running anything). The text is
 * handed to `onText` as it arrives (the live text of docs/runs.md); the result is the whole call, as before.
 *
 * Servers that bend the protocol get no answer taken unread: a plain JSON completion sent to a streamed request is read
 * as the stream it stands for (./unstreamed-answer.ts), a stream that ends before its finish marker fails the call
 * (./answer-end.ts), and a call without usage counts estimated tokens (./usage-estimate.ts).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, streamText, tool, type LanguageModel, type ToolSet } from 'ai';
import type { Config } from '../../config';
import type { JsonValue } from '../../domain/json';
import { endsAnswer } from './answer-end';
import { classifyLlmError, LlmError, providerLabel } from './errors';
import { toModelMessages } from './messages';
import { parseModelRef } from './model-ref';
import type { GenerateRequest, GenerateResult, LlmProvider, LlmToolCall, ModelRef } from './types';
import { readingUnstreamedAnswers, type ApiFormat } from './unstreamed-answer';
import { reportedOrEstimated } from './usage-estimate';

/** What the provider layer needs from the configuration (keys and base URLs live only here, never in payloads). */
export type LlmConfig = Pick<
  Config,
  'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL' | 'LLM_BASE_URL' | 'LLM_API_KEY'
>;

export interface ProviderOptions {
  /** Abort one call after this long (reported as a retryable `timeout`). */
  timeoutMs?: number;
}

function notConfigured(ref: ModelRef, variable: string): LlmError {
  return new LlmError(
    'not_configured',
    `model ${ref.provider}:${ref.name} needs ${variable}: set it in the worker's environment, then rerun this run; ` +
      'or, to use another provider (a local model: docs/agents.md "Local models"), rerun it with a model override ' +
      '(runs rerun <run> --model <step>=<provider:model>)',
  );
}

function apiFormat(ref: ModelRef): ApiFormat {
  return ref.provider === 'anthropic' ? 'anthropic' : 'openai';
}

function languageModel(config: LlmConfig, ref: ModelRef): LanguageModel {
  const fetch = readingUnstreamedAnswers(apiFormat(ref), providerLabel(ref.provider));
  switch (ref.provider) {
    case 'openai':
      if (!config.OPENAI_API_KEY) throw notConfigured(ref, 'OPENAI_API_KEY');
      // Chat completions rather than the Responses API: it is what OpenAI-compatible gateways behind OPENAI_BASE_URL speak.
      // Streamed answers: the SDK tracks tool calls by their index and names blank or repeated ids itself.
      return createOpenAI({ apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL, fetch }).chat(ref.name);
    case 'anthropic':
      if (!config.ANTHROPIC_API_KEY) throw notConfigured(ref, 'ANTHROPIC_API_KEY');
      return createAnthropic({ apiKey: config.ANTHROPIC_API_KEY, baseURL: config.ANTHROPIC_BASE_URL, fetch })(ref.name);
    case 'compat':
      if (!config.LLM_BASE_URL) throw notConfigured(ref, 'LLM_BASE_URL');
      // Local servers (Ollama, llama.cpp, LM Studio) usually need no key; vLLM and gateways may.
      return createOpenAICompatible({
        name: 'compat',
        baseURL: config.LLM_BASE_URL,
        apiKey: config.LLM_API_KEY,
        fetch,
        // Streamed calls report their usage only when asked to (budgets and the status need it).
        includeUsage: true,
      }).chatModel(ref.name);
  }
}

function toToolCall(call: { toolCallId: string; toolName: string; input: unknown; invalid?: boolean }): LlmToolCall {
  // The SDK hands back the raw text as `input` when the model's arguments were not JSON.
  if (call.invalid && typeof call.input === 'string') {
    return { id: call.toolCallId, name: call.toolName, args: {}, invalid_args: call.input };
  }
  return { id: call.toolCallId, name: call.toolName, args: (call.input ?? {}) as JsonValue };
}

/**
 * Builds the provider for `model` (`openai:…`, `anthropic:…`, `compat:…`). Throws a non-retryable LlmError when the
 * model string is malformed or the provider is not configured, naming the variable to set.
 */
export function createLlmProvider(config: LlmConfig, model: string, options: ProviderOptions = {}): LlmProvider {
  const ref = parseModelRef(model);
  const sdkModel = languageModel(config, ref);
  const secrets = [config.OPENAI_API_KEY, config.ANTHROPIC_API_KEY, config.LLM_API_KEY].filter((s): s is string => !!s);

  return {
    ref,
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      const tools: ToolSet = {};
      for (const spec of request.tools) {
        // Lenient schema on purpose: arguments are validated by the tool's own zod schema in the tool activity, so
        // that a bad call is reported back to the model instead of failing the model call.
        tools[spec.name] = tool({ description: spec.description, inputSchema: jsonSchema(spec.parameters) });
      }
      const timeout = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
      const signals = [request.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
      try {
        const result = streamText({
          model: sdkModel,
          system: request.system,
          messages: toModelMessages(request.messages),
          tools: request.tools.length ? tools : undefined,
          temperature: request.temperature,
          maxOutputTokens: request.maxOutputTokens,
          maxRetries: 0,
          abortSignal: signals.length ? AbortSignal.any(signals) : undefined,
          // Failures arrive as `error` parts below and are classified there; the SDK's default would print them.
          onError: () => undefined,
          // The API's own end-of-answer marker is only seen in the raw chunks.
          includeRawChunks: true,
        });
        let ended = false;
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') request.onText?.(part.text);
          else if (part.type === 'raw') ended ||= endsAnswer(apiFormat(ref), part.rawValue);
          else if (part.type === 'error') throw part.error;
          else if (part.type === 'abort') throw new Error('the model call was aborted');
        }
        if (!ended) {
          throw new LlmError(
            'invalid_response',
            `${providerLabel(ref.provider)} ended its answer before finishing it (the stream closed without a finish reason)`,
            { status: 200 },
          );
        }
        const [text, toolCalls, usage, finishReason, warnings] = await Promise.all([
          result.text,
          result.toolCalls,
          result.usage,
          result.finishReason,
          result.warnings,
        ]);
        const answer = { text: text === '' ? null : text, toolCalls: toolCalls.map(toToolCall) };
        return {
          ...answer,
          usage: reportedOrEstimated(usage, request, answer),
          finishReason,
          warnings: (warnings ?? []).map((w) => JSON.stringify(w)),
        };
      } catch (err) {
        // Cancellation of the activity is not a provider failure: let it through untouched.
        if (request.signal?.aborted) throw err;
        if (timeout?.aborted)
          throw new LlmError('timeout', `${ref.provider}:${ref.name} did not answer within ${options.timeoutMs} ms`);
        throw classifyLlmError(err, ref.provider, secrets);
      }
    },
  };
}
