/**
 * The provider adapters over real HTTP against the scripted OpenAI- and Anthropic-compatible servers: what is sent,
 * what comes back, and how each failure is classified.
 */
import { LlmError } from '../../../temporal/llm/errors';
import { createLlmProvider, type LlmConfig } from '../../../temporal/llm/provider';
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { uniqueId } from '../../helpers/stack';

const tools = [
  {
    name: 'calculator',
    description: 'Evaluates arithmetic',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
];

async function caught(promise: Promise<unknown>): Promise<LlmError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LlmError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('LLM provider adapters (real HTTP, scripted servers)', () => {
  let server: LlmServer;
  let config: LlmConfig;

  beforeAll(async () => {
    server = await startLlmServer();
    config = {
      OPENAI_API_KEY: 'sk-test-openai-secret',
      OPENAI_BASE_URL: server.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-secret',
      ANTHROPIC_BASE_URL: server.baseUrl,
      LLM_BASE_URL: server.baseUrl,
      LLM_API_KEY: undefined,
    };
  });
  afterAll(async () => server?.close());

  it('openai: sends system prompt, history and tool schemas; returns tool calls and usage', async () => {
    const script = server.script(uniqueId('m-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '2+2' } }], usage: { input: 30, output: 4 } },
    ]);
    const provider = createLlmProvider(config, `openai:${script.model}`);
    const result = await provider.generate({
      system: 'You are terse.',
      messages: [{ role: 'user', text: 'what is 2+2' }],
      tools,
    });
    expect(result.toolCalls).toEqual([{ id: expect.any(String), name: 'calculator', args: { expression: '2+2' } }]);
    expect(result.usage).toEqual({ input_tokens: 30, output_tokens: 4 });
    expect(result.finishReason).toBe('tool-calls');
    const sent = script.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.authorization).toBe('Bearer sk-test-openai-secret');
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'what is 2+2' },
    ]);
    expect(sent.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'calculator',
          description: 'Evaluates arithmetic',
          parameters: tools[0]!.parameters,
          strict: false,
        },
      },
    ]);
  });

  it('openai: replays a tool round trip and returns the final text', async () => {
    const script = server.script(uniqueId('m-'), [{ text: 'The answer is 4.' }]);
    const provider = createLlmProvider(config, `openai:${script.model}`);
    const result = await provider.generate({
      system: 's',
      messages: [
        { role: 'user', text: 'q' },
        { role: 'assistant', text: null, tool_calls: [{ id: 'c1', name: 'calculator', args: { expression: '2+2' } }] },
        { role: 'tool', results: [{ call_id: 'c1', name: 'calculator', output: { value: 4 }, is_error: false }] },
      ],
      tools,
    });
    expect(result).toMatchObject({ text: 'The answer is 4.', toolCalls: [], finishReason: 'stop' });
    const messages = script.requests[0]!.body.messages as Record<string, unknown>[];
    expect(messages[2]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'c1', function: { name: 'calculator', arguments: '{"expression":"2+2"}' } }],
    });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '{"value":4}' });
  });

  it('openai: malformed tool arguments come back as an invalid call with the raw text', async () => {
    const script = server.script(uniqueId('m-'), [{ toolCalls: [{ name: 'calculator', args: '{"expression": "2+' }] }]);
    const result = await createLlmProvider(config, `openai:${script.model}`).generate({
      system: 's',
      messages: [{ role: 'user', text: 'q' }],
      tools,
    });
    expect(result.toolCalls).toEqual([
      { id: expect.any(String), name: 'calculator', args: {}, invalid_args: '{"expression": "2+' },
    ]);
  });

  it('classifies 429 with Retry-After, 5xx, 401, 400 and 404 from the status code', async () => {
    const provider = (replies: Parameters<LlmServer['script']>[1]) =>
      createLlmProvider(config, `openai:${server.script(uniqueId('m-'), replies).model}`);
    const call = (p: ReturnType<typeof provider>) =>
      p.generate({ system: 's', messages: [{ role: 'user', text: 'q' }], tools: [] });

    const limited = await caught(call(provider([{ status: 429, headers: { 'retry-after': '7' } }])));
    expect(limited).toMatchObject({
      kind: 'rate_limited',
      retryable: true,
      details: { status: 429, retryAfterMs: 7000 },
    });

    const server500 = await caught(call(provider([{ status: 503 }])));
    expect(server500).toMatchObject({ kind: 'server', retryable: true });

    const auth = await caught(
      call(provider([{ status: 401, message: 'Incorrect API key provided: sk-test-openai-secret' }])),
    );
    expect(auth).toMatchObject({ kind: 'auth', retryable: false });
    expect(auth.message).toContain('OPENAI_API_KEY');
    expect(auth.message).not.toContain('sk-test-openai-secret');

    expect(await caught(call(provider([{ status: 400, message: 'bad field' }])))).toMatchObject({
      kind: 'bad_request',
      retryable: false,
    });
    const unknownModel = await caught(
      createLlmProvider(config, 'openai:no-such-model').generate({
        system: 's',
        messages: [{ role: 'user', text: 'q' }],
        tools: [],
      }),
    );
    expect(unknownModel).toMatchObject({ kind: 'not_found', retryable: false });
  });

  it('classifies a refused connection as retryable and a timeout as retryable', async () => {
    const closed = await startLlmServer();
    const url = closed.baseUrl;
    await closed.close();
    const refused = await caught(
      createLlmProvider({ ...config, OPENAI_BASE_URL: url }, 'openai:x').generate({
        system: 's',
        messages: [{ role: 'user', text: 'q' }],
        tools: [],
      }),
    );
    expect(refused).toMatchObject({ kind: 'connection', retryable: true });

    const script = server.script(uniqueId('m-'), [{ hold: new Promise(() => undefined) }]);
    const slow = await caught(
      createLlmProvider(config, `openai:${script.model}`, { timeoutMs: 200 }).generate({
        system: 's',
        messages: [{ role: 'user', text: 'q' }],
        tools: [],
      }),
    );
    expect(slow).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('names the variable to set when a provider is not configured', () => {
    expect(() => createLlmProvider({ ...config, ANTHROPIC_API_KEY: undefined }, 'anthropic:claude')).toThrow(
      /ANTHROPIC_API_KEY/,
    );
    expect(() => createLlmProvider({ ...config, OPENAI_API_KEY: undefined }, 'openai:gpt')).toThrow(/OPENAI_API_KEY/);
    expect(() => createLlmProvider({ ...config, LLM_BASE_URL: undefined }, 'compat:llama')).toThrow(/LLM_BASE_URL/);
    expect(() => createLlmProvider(config, 'mistral:large')).toThrow(/openai:<name>/);
  });

  it('anthropic: speaks the messages API with x-api-key, tool_use and tool_result blocks', async () => {
    const script = server.script(uniqueId('claude-'), [
      {
        toolCalls: [{ name: 'calculator', args: { expression: '6*7' }, id: 'toolu_1' }],
        text: 'Let me compute.',
        usage: { input: 50, output: 9 },
      },
      { text: '42' },
    ]);
    const provider = createLlmProvider(config, `anthropic:${script.model}`);
    const first = await provider.generate({ system: 'sys', messages: [{ role: 'user', text: 'q' }], tools });
    expect(first).toMatchObject({
      text: 'Let me compute.',
      toolCalls: [{ id: 'toolu_1', name: 'calculator', args: { expression: '6*7' } }],
      usage: { input_tokens: 50, output_tokens: 9 },
    });
    const second = await provider.generate({
      system: 'sys',
      messages: [
        { role: 'user', text: 'q' },
        { role: 'assistant', text: first.text, tool_calls: first.toolCalls },
        { role: 'tool', results: [{ call_id: 'toolu_1', name: 'calculator', output: { value: 42 }, is_error: false }] },
      ],
      tools,
    });
    expect(second.text).toBe('42');
    const [req1, req2] = script.requests;
    expect(req1!.path).toBe('/v1/messages');
    expect(req1!.apiKeyHeader).toBe('sk-ant-test-secret');
    expect(req1!.body.system).toEqual([{ type: 'text', text: 'sys' }]);
    expect(req1!.body.tools).toEqual([
      { name: 'calculator', description: 'Evaluates arithmetic', input_schema: tools[0]!.parameters },
    ]);
    expect(req2!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me compute.' },
          { type: 'tool_use', id: 'toolu_1', name: 'calculator', input: { expression: '6*7' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"value":42}' }] },
    ]);

    const auth = await caught(
      createLlmProvider(
        config,
        `anthropic:${server.script(uniqueId('claude-'), [{ status: 401, message: 'invalid x-api-key' }]).model}`,
      ).generate({
        system: 's',
        messages: [{ role: 'user', text: 'q' }],
        tools: [],
      }),
    );
    expect(auth).toMatchObject({ kind: 'auth', retryable: false });
    expect(auth.message).toContain('ANTHROPIC_API_KEY');
  });

  it('reads a plain JSON answer to a streamed call (both formats) and estimates usage a stream leaves out', async () => {
    const call = (model: string) =>
      createLlmProvider(config, model).generate({ system: 's', messages: [{ role: 'user', text: 'q' }], tools });
    const claude = server.script(uniqueId('claude-'), [
      {
        text: 'Computing.',
        toolCalls: [{ name: 'calculator', args: { expression: '6*7' }, id: 'toolu_9' }],
        unstreamed: true,
      },
    ]);
    expect(await call(`anthropic:${claude.model}`)).toMatchObject({
      text: 'Computing.',
      toolCalls: [{ id: 'toolu_9', name: 'calculator', args: { expression: '6*7' } }],
      usage: { input_tokens: 11, output_tokens: 7 },
      finishReason: 'tool-calls',
    });
    expect(claude.requests[0]!.body.stream).toBe(true);

    const gpt = server.script(uniqueId('m-'), [{ text: 'abcdefghi', usage: null }]);
    const result = await call(`openai:${gpt.model}`);
    expect(result.usage).toMatchObject({ output_tokens: 3, estimated: true });
    expect(result.usage.input_tokens).toBeGreaterThan(0);
  });

  it('compat: an OpenAI-compatible endpoint without a key', async () => {
    const script = server.script(uniqueId('llama-'), [{ text: 'hi' }]);
    const result = await createLlmProvider(config, `compat:${script.model}`).generate({
      system: 's',
      messages: [{ role: 'user', text: 'q' }],
      tools: [],
    });
    expect(result.text).toBe('hi');
    expect(script.requests[0]!.authorization).toBeUndefined();
    expect(script.requests[0]!.path).toBe('/v1/chat/completions');
  });
});
