/**
 * Some servers ignore `"stream": true` and answer with one `application/json` completion (older local servers, proxies
 * that buffer). The AI SDK reads a streamed call's body as server-sent events whatever its content type, finds none in
 * a JSON body, and reports an empty answer with no usage: the step would complete on text it never read. This fetch
 * middleware (the providers' public `fetch` option) turns such a body into the stream the server would have sent —
 * the same text, tool calls, finish reason and usage — so the answer goes through the one streamed code path that
 * produces every result. A JSON body that is not a completion (an error object sent with 200) fails the call with a
 * retryable `invalid_response` naming what came back; it is never taken for an empty answer.
 *
 * Every call of a provider built in ./provider.ts asks for a stream, so any successful JSON answer is one to convert.
 */
import { z } from 'zod';
import { LlmError } from './errors';

/** The wire format of the provider's API: OpenAI chat completions (`openai`, `compat`) or Anthropic messages. */
export type ApiFormat = 'openai' | 'anthropic';

const openAiCompletion = z.looseObject({
  id: z.string().nullish(),
  created: z.number().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          // Some servers send content parts instead of a string.
          content: z.union([z.string(), z.array(z.looseObject({ text: z.string().optional() }))]).nullish(),
          tool_calls: z
            .array(
              z.looseObject({
                id: z.string().nullish(),
                function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.unknown().optional(),
});

const anthropicMessage = z.looseObject({
  type: z.literal('message'),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: z.looseObject({ output_tokens: z.number() }),
});

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});

function openAiEvents(body: z.infer<typeof openAiCompletion>): string[] {
  const choice = body.choices[0]!;
  const base = {
    id: body.id ?? 'chatcmpl-unstreamed',
    object: 'chat.completion.chunk',
    created: body.created ?? 0,
    model: body.model ?? '',
  };
  const content = choice.message.content;
  const text = Array.isArray(content) ? content.map((p) => p.text ?? '').join('') : (content ?? '');
  const toolCalls = (choice.message.tool_calls ?? []).map((c, index) => ({
    index,
    ...(c.id ? { id: c.id } : {}),
    type: 'function',
    function: { name: c.function.name, arguments: c.function.arguments ?? '' },
  }));
  const chunk = (extra: Record<string, unknown>) => JSON.stringify({ ...base, ...extra });
  const delta = { role: 'assistant', content: text, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
  // A whole completion has ended, whatever it says: a missing finish reason is taken for the ordinary one.
  const finish = choice.finish_reason ?? (toolCalls.length ? 'tool_calls' : 'stop');
  return [
    chunk({ choices: [{ index: 0, delta, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] }),
    // No usage in the body: none in the stream either (the provider layer then estimates it).
    ...(body.usage ? [chunk({ choices: [], usage: body.usage })] : []),
    '[DONE]',
  ].map((data) => `data: ${data}\n\n`);
}

function anthropicEvents(body: z.infer<typeof anthropicMessage>): string[] {
  const events: Record<string, unknown>[] = [];
  const start = {
    ...body,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...body.usage, output_tokens: 0 },
  };
  events.push({ type: 'message_start', message: start });
  let index = 0;
  // Text and tool calls are the answer; other blocks (thinking) are not read from a stream either.
  for (const block of body.content) {
    const text = textBlock.safeParse(block);
    const toolUse = toolUseBlock.safeParse(block);
    if (text.success) {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: text.data.text } });
    } else if (toolUse.success) {
      const { id, name, input } = toolUse.data;
      events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } });
      const json = JSON.stringify(input ?? {});
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } });
    } else {
      continue;
    }
    events.push({ type: 'content_block_stop', index });
    index++;
  }
  const stop = body.stop_reason ?? (body.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  events.push({
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: body.stop_sequence ?? null },
    usage: { output_tokens: body.usage.output_tokens },
  });
  events.push({ type: 'message_stop' });
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
}

/** The completion in `json` as the events of a stream, or null when it is not a completion of the API's format. */
export function completionAsEvents(api: ApiFormat, json: unknown): string[] | null {
  if (api === 'openai') {
    const body = openAiCompletion.safeParse(json);
    return body.success ? openAiEvents(body.data) : null;
  }
  const body = anthropicMessage.safeParse(json);
  return body.success ? anthropicEvents(body.data) : null;
}

function isJson(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** What the top level of a body holds, for the error message (its values may quote the request: never shown). */
function shape(json: unknown): string {
  if (json === null || typeof json !== 'object') return typeof json;
  return Array.isArray(json) ? 'an array' : `an object with ${Object.keys(json).slice(0, 8).join(', ') || 'no keys'}`;
}

/**
 * Wraps `fetch` for one provider: a successful JSON answer is handed on as the equivalent `text/event-stream`
 * answer; anything else passes through untouched. `label` names the provider in errors.
 */
export function readingUnstreamedAnswers(
  api: ApiFormat,
  label: string,
  fetch: typeof globalThis.fetch = globalThis.fetch,
): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !isJson(response.headers.get('content-type'))) return response;
    const raw = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new LlmError(
        'invalid_response',
        `${label} answered a streamed request with a JSON content type and a body that is not JSON`,
        { status: response.status },
      );
    }
    const events = completionAsEvents(api, json);
    if (!events) {
      throw new LlmError(
        'invalid_response',
        `${label} answered a streamed request with JSON that is not a ${api === 'openai' ? 'chat completion' : 'message'} (${shape(json)})`,
        { status: response.status },
      );
    }
    const headers = new Headers(response.headers);
    headers.set('content-type', 'text/event-stream');
    // The text is decoded already: the new body has its own length and no encoding.
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(events.join(''), { status: response.status, statusText: response.statusText, headers });
  };
}
