/**
 * The agent loop through the real run workflow, on real Temporal with a real worker and real MongoDB, against the
 * scripted OpenAI- and Anthropic-compatible HTTP servers: what the model was sent, which tools ran with which
 * arguments, outputs, usage, attempts and failure reasons.
 */
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { agentStep, runSnapshot, runToEnd, transcriptOf } from '../../helpers/agent-runs';
import {
  startTestApi,
  startTestWorker,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../../helpers/stack';
import type { AgentStepSnapshot } from '../../../temporal/contract/run';

const OPENAI_KEY = 'sk-test-agentloop-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-agentloop-0123456789';

describe('agent steps on the run workflow', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: OPENAI_KEY,
        OPENAI_BASE_URL: llm.baseUrl,
        ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        ANTHROPIC_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  const run = (steps: AgentStepSnapshot[], input?: Record<string, string>) =>
    runToEnd(
      {
        db: api.database.db,
        temporal: api.temporal,
        taskQueue: api.config.TEMPORAL_TASK_QUEUE,
        namespace: api.config.TEMPORAL_NAMESPACE,
      },
      runSnapshot(steps, input),
    );
  const outputOf = (doc: { steps: { output_json: string | null }[] }, i = 0) =>
    JSON.parse(doc.steps[i]!.output_json ?? 'null');

  it('runs model → tool → model: prompt, numbered tasks, tool schemas, tool result, output and usage', async () => {
    const script = llm.script(uniqueId('gpt-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 100, output: 10 } },
      { text: 'The answer is 42.', usage: { input: 130, output: 6 } },
    ]);
    const { doc, failure } = await run([agentStep({ model: `openai:${script.model}` })]);
    expect(failure).toBeNull();
    expect(doc.status).toBe('completed');
    expect(outputOf(doc)).toBe('The answer is 42.');
    expect(doc.steps[0]).toMatchObject({
      status: 'completed',
      turns: 2,
      usage: { llm_calls: 2, input_tokens: 230, output_tokens: 16 },
    });

    const [first, second] = script.requests;
    expect(script.requests).toHaveLength(2);
    const messages = first!.body.messages as { role: string; content: string }[];
    expect(messages[0]!.role).toBe('system');
    expect(messages[0]!.content).toContain('You are a careful assistant.');
    expect(messages[0]!.content).toContain('1. Read the question\n2. Compute the answer with the calculator');
    expect(messages[1]).toEqual({ role: 'user', content: 'What is 6 times 7?' });
    expect(first!.body.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({
          name: 'calculator',
          parameters: expect.objectContaining({ type: 'object', required: ['expression'] }),
        }),
      }),
    ]);
    const tail = (second!.body.messages as Record<string, unknown>[]).slice(2);
    expect(tail[0]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ function: { name: 'calculator', arguments: '{"expression":"6*7"}' } }],
    });
    expect(tail[1]).toMatchObject({ role: 'tool', content: '{"result":42}' });

    const transcript = await transcriptOf(api.database.db, doc._id);
    expect(transcript.map((e) => e.kind)).toEqual(['setup', 'user', 'assistant', 'tool', 'assistant']);
    expect(transcript[3]).toMatchObject({
      kind: 'tool',
      name: 'calculator',
      args: { expression: '6*7' },
      output: { result: 42 },
      is_error: false,
    });
    // No key anywhere in what was stored.
    expect(JSON.stringify(transcript)).not.toContain(OPENAI_KEY);
    expect(JSON.stringify(doc)).not.toContain(OPENAI_KEY);
  });

  it('malformed, invalid and not-allowed tool calls go back to the model as errors and cost a turn', async () => {
    const script = llm.script(uniqueId('gpt-'), [
      { toolCalls: [{ name: 'calculator', args: '{"expression": "6*' }] },
      {
        toolCalls: [
          { name: 'calculator', args: { expr: '1' } },
          { name: 'send_email', args: { to: 'a@example.com', subject: 's', text: 't' } },
        ],
      },
      { toolCalls: [{ name: 'calculator', args: { expression: '2+2' } }] },
      { text: 'four' },
    ]);
    const { doc } = await run([agentStep({ model: `openai:${script.model}` })]);
    expect(doc.status).toBe('completed');
    expect(doc.steps[0]!.turns).toBe(4);
    expect(script.requests).toHaveLength(4);

    const toolMessages = (n: number) =>
      (script.requests[n]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
    expect(toolMessages(1)).toHaveLength(1);
    expect(toolMessages(1)[0]!.content).toContain('not valid JSON');
    const second = toolMessages(2).slice(1);
    expect(second[0]!.content).toContain('invalid arguments');
    expect(second[1]!.content).toContain('tool \\"send_email\\" is not available in this step');

    const tools = (await transcriptOf(api.database.db, doc._id)).filter((e) => e.kind === 'tool');
    expect(tools.map((t) => t.kind === 'tool' && [t.name, t.is_error])).toEqual([
      ['calculator', true],
      ['calculator', true],
      ['send_email', true],
      ['calculator', false],
    ]);
  });

  it('a 429 with Retry-After is retried by Temporal after the requested delay, then succeeds', async () => {
    const script = llm.script(uniqueId('gpt-'), [
      { status: 429, headers: { 'retry-after': '3' }, message: 'slow down' },
      { text: 'done' },
    ]);
    const seen: number[] = [];
    const started = Date.now();
    const waiting = (async () => {
      await script.waitForRequests(1);
      seen.push(Date.now());
      await script.waitForRequests(2);
      seen.push(Date.now());
    })();
    const { doc } = await run([agentStep({ model: `openai:${script.model}`, tools: [] })]);
    await waiting.catch(() => undefined);
    expect(doc.status).toBe('completed');
    expect(outputOf(doc)).toBe('done');
    expect(script.requests).toHaveLength(2);
    expect(doc.steps[0]).toMatchObject({ attempts: 2, usage: { llm_calls: 1 } });
    // The retry policy's own first interval is 1 s: only Retry-After explains a gap of 3 s.
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(2900);
    expect(started).toBeLessThanOrEqual(seen[0]!);
  });

  it('repeated 500s fail the step after its bounded attempts', async () => {
    const script = llm.script(uniqueId('gpt-'), [{ status: 500, message: 'boom' }]);
    const { doc } = await run([agentStep({ model: `openai:${script.model}`, retry: { max_attempts: 3 } })]);
    expect(doc.status).toBe('failed');
    expect(script.requests).toHaveLength(3);
    expect(doc.error).toMatchObject({ step_id: 'ask', reason: 'attempts_exhausted' });
    expect(doc.error!.message).toContain('HTTP 500');
    expect(doc.steps[0]).toMatchObject({ status: 'failed', attempts: 3, error: { reason: 'attempts_exhausted' } });
  });

  it('a model that never stops calling tools fails with turn_limit after max_turns model calls', async () => {
    const script = llm.script(uniqueId('gpt-'), (_req, i) => ({
      toolCalls: [{ name: 'calculator', args: { expression: `${i}+1` } }],
    }));
    const { doc } = await run([agentStep({ model: `openai:${script.model}`, max_turns: 3 })]);
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatchObject({ step_id: 'ask', reason: 'turn_limit' });
    expect(script.requests).toHaveLength(3);
    const tools = (await transcriptOf(api.database.db, doc._id)).filter((e) => e.kind === 'tool');
    // The third turn's tool call is not run: there is no turn left to use its result.
    expect(tools.map((t) => t.kind === 'tool' && t.args)).toEqual([{ expression: '0+1' }, { expression: '1+1' }]);
  });

  it('an authentication error fails at once, non-retryably, saying which variable to check', async () => {
    const script = llm.script(uniqueId('gpt-'), [
      { status: 401, message: `Incorrect API key provided: ${OPENAI_KEY}` },
    ]);
    const { doc } = await run([agentStep({ model: `openai:${script.model}` })]);
    expect(doc.status).toBe('failed');
    expect(script.requests).toHaveLength(1);
    expect(doc.error).toMatchObject({ step_id: 'ask', reason: 'non_retryable' });
    expect(doc.error!.message).toContain('OPENAI_API_KEY');
    expect(JSON.stringify(doc)).not.toContain(OPENAI_KEY);
    expect(doc.steps[0]).toMatchObject({ status: 'failed', attempts: 1, error: { reason: 'non_retryable' } });
  });

  it('a provider that is not configured fails non-retryably naming the variable to set', async () => {
    const { doc } = await run([agentStep({ model: 'compat:llama3' })]);
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatchObject({ reason: 'non_retryable' });
    expect(doc.error!.message).toContain('LLM_BASE_URL');
  });

  it('output_schema: an invalid answer gets one repair turn', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'number' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const script = llm.script(uniqueId('gpt-'), [{ text: 'It is 42.' }, { text: '```json\n{"answer": 42}\n```' }]);
    const { doc } = await run([agentStep({ model: `openai:${script.model}`, tools: [], output_schema: schema })]);
    expect(doc.status).toBe('completed');
    expect(outputOf(doc)).toEqual({ answer: 42 });
    expect((script.requests[0]!.body.messages as { content: string }[])[0]!.content).toContain(JSON.stringify(schema));
    const last = (script.requests[1]!.body.messages as { role: string; content: string }[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toContain('not valid JSON');

    const bad = llm.script(uniqueId('gpt-'), [{ text: '{"answer": "x"}' }]);
    const failed = await run([agentStep({ model: `openai:${bad.model}`, tools: [], output_schema: schema })]);
    expect(failed.doc.status).toBe('failed');
    expect(bad.requests).toHaveLength(2);
    expect(failed.doc.error!.message).toContain('/answer must be number');
  });

  it('anthropic: the same loop over the messages API', async () => {
    const script = llm.script(uniqueId('claude-'), [
      {
        toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }],
        text: 'Computing.',
        usage: { input: 40, output: 8 },
      },
      { text: '42', usage: { input: 60, output: 2 } },
    ]);
    const { doc } = await run([agentStep({ model: `anthropic:${script.model}` })]);
    expect(doc.status).toBe('completed');
    expect(outputOf(doc)).toBe('42');
    expect(doc.steps[0]!.usage).toEqual({ llm_calls: 2, input_tokens: 100, output_tokens: 10 });
    const [first, second] = script.requests;
    expect(first!.path).toBe('/v1/messages');
    expect(first!.apiKeyHeader).toBe(ANTHROPIC_KEY);
    expect((first!.body.system as { text: string }[])[0]!.text).toContain('1. Read the question');
    expect(first!.body.tools).toEqual([
      expect.objectContaining({ name: 'calculator', input_schema: expect.objectContaining({ type: 'object' }) }),
    ]);
    expect((second!.body.messages as { content: unknown }[])[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: expect.any(String), content: '{"result":42}' }],
    });
  });
});
