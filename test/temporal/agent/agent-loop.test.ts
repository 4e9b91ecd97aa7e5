/**
 * Agent steps end to end: a workflow created and started through the API, run by the real run workflow on real
 * Temporal with a real worker and real MongoDB, against the scripted OpenAI- and Anthropic-compatible HTTP servers
 * (so the real provider code runs over HTTP), followed on the status endpoint and read back on the transcript
 * endpoint. Asserts what the model was sent, which tools ran with which arguments, outputs, usage, attempts and
 * failure reasons.
 */
import { createAgentWorkflow, getTranscript, insertAgentTemplate, runAgent } from '../../helpers/agent-runs';
import { historyText } from '../../helpers/history-text';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp';
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import {
  startTestApi,
  startTestWorker,
  testCodec,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

const OPENAI_KEY = 'sk-test-agentloop-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-test-agentloop-0123456789';

type Msg = { role: string; content: string; tool_calls?: unknown };

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('agent steps on the run workflow', () => {
  let llm: LlmServer;
  let sink: HttpSink;
  let smtp: TestSmtp;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    llm = await startLlmServer();
    sink = await startHttpSink();
    smtp = await startTestSmtp();
    api = await startTestApi(
      testConfig({
        HTTP_ALLOWED_HOSTS: sink.host,
        SMTP_URL: smtp.url,
        OPENAI_API_KEY: OPENAI_KEY,
        OPENAI_BASE_URL: llm.baseUrl,
        ANTHROPIC_API_KEY: ANTHROPIC_KEY,
        ANTHROPIC_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
    await sink?.close();
    await smtp?.close();
  });

  it('runs model → tool → model: prompt, numbered tasks, tool schemas, tool result, output and usage', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 100, output: 10 } },
      { text: 'The answer is 42.', usage: { input: 130, output: 6 } },
    ]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      config: { temperature: 0.2, max_output_tokens: 300 },
    });
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('The answer is 42.');
    expect(status.steps[0]).toMatchObject({
      status: 'completed',
      attempts: 1,
      turns: 2,
      usage: { llm_calls: 2, input_tokens: 230, output_tokens: 16 },
    });
    expect(status.usage).toEqual({ llm_calls: 2, input_tokens: 230, output_tokens: 16 });

    expect(script.requests).toHaveLength(2);
    const [first, second] = script.requests;
    expect(first!.body).toMatchObject({ temperature: 0.2, max_tokens: 300 });
    const messages = first!.body.messages as Msg[];
    expect(messages[0]!.role).toBe('system');
    expect(messages[0]!.content).toContain('You are a careful assistant.');
    expect(messages[0]!.content).toContain('1. Read the question\n2. Compute the answer with the calculator');
    expect(messages[1]).toEqual({ role: 'user', content: 'What is 6 times 7?' });
    expect(first!.body.tools).toEqual([
      {
        type: 'function',
        function: expect.objectContaining({
          name: 'calculator',
          parameters: expect.objectContaining({ type: 'object', required: ['expression'] }),
        }),
      },
    ]);
    const tail = (second!.body.messages as Msg[]).slice(2);
    expect(tail[0]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ function: { name: 'calculator', arguments: '{"expression":"6*7"}' } }],
    });
    expect(tail[1]).toMatchObject({ role: 'tool', content: '{"result":42}' });

    const transcript = await getTranscript(api, user, runId);
    expect(transcript.entries.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript.entries[2]).toMatchObject({
      name: 'calculator',
      args: { expression: '6*7' },
      result: { result: 42 },
      is_error: false,
    });
    expect(transcript.final_answer).toBe('The answer is 42.');
    // The key is never stored or shown.
    expect(JSON.stringify([status, transcript])).not.toContain(OPENAI_KEY);
  });

  it('malformed, invalid and not-allowed tool calls go back to the model as errors and cost a turn', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
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
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}` });
    expect(status.status).toBe('completed');
    expect(status.steps[0]).toMatchObject({ turns: 4, usage: { llm_calls: 4 } });
    expect(script.requests).toHaveLength(4);

    const toolMessages = (n: number) => (script.requests[n]!.body.messages as Msg[]).filter((m) => m.role === 'tool');
    expect(toolMessages(1)).toHaveLength(1);
    expect(toolMessages(1)[0]!.content).toContain('not valid JSON');
    const [invalid, notAllowed] = toolMessages(2).slice(1);
    expect(invalid!.content).toContain('invalid arguments');
    expect(invalid!.content).toContain('expression');
    expect(notAllowed!.content).toContain('tool \\"send_email\\" is not available in this step');

    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([
      ['calculator', true],
      ['calculator', true],
      ['send_email', true],
      ['calculator', false],
    ]);
  });

  it('a 429 with Retry-After is retried by Temporal after the requested delay, then succeeds', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { status: 429, headers: { 'retry-after': '3' }, message: 'slow down' },
      { text: 'done' },
    ]);
    const seen: number[] = [];
    const watching = (async () => {
      await script.waitForRequests(1, 60_000);
      seen.push(Date.now());
      await script.waitForRequests(2, 60_000);
      seen.push(Date.now());
    })();
    const { status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: [] });
    await watching;
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('done');
    expect(script.requests).toHaveLength(2);
    expect(status.steps[0]).toMatchObject({ attempts: 2, usage: { llm_calls: 1 } });
    // The retry policy's own first interval is 1 s: only the Retry-After header explains a gap of 3 s or more.
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(2900);
  });

  it('repeated 500s fail the step after its bounded attempts', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [{ status: 500, message: 'boom' }]);
    const { status } = await runAgent(api, user, { model: `openai:${script.model}`, max_attempts: 3 });
    expect(status.status).toBe('failed');
    expect(script.requests).toHaveLength(3);
    expect(status.error).toMatchObject({ step_id: 'ask', reason: 'attempts_exhausted' });
    expect(status.error!.message).toContain('HTTP 500');
    expect(status.steps[0]).toMatchObject({ status: 'failed', attempts: 3 });
  });

  it('a model that never stops calling tools fails with turn_limit after max_turns model calls', async () => {
    const script = llm.script(uniqueId('gpt-test-'), (_req, i) => ({
      toolCalls: [{ name: 'calculator', args: { expression: `${i}+1` } }],
    }));
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}`, max_turns: 3 });
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask', reason: 'turn_limit' });
    expect(status.steps[0]).toMatchObject({ status: 'failed', turns: 3, usage: { llm_calls: 3 } });
    expect(script.requests).toHaveLength(3);
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    // The third turn's tool call is not run: no turn is left to use its result.
    expect(tools.map((t) => t.args)).toEqual([{ expression: '0+1' }, { expression: '1+1' }]);
  });

  it('an authentication error fails at once, non-retryably, saying which variable to check', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { status: 401, message: `Incorrect API key provided: ${OPENAI_KEY}` },
    ]);
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}` });
    expect(status.status).toBe('failed');
    expect(script.requests).toHaveLength(1);
    expect(status.error).toMatchObject({ step_id: 'ask', reason: 'non_retryable' });
    expect(status.error!.message).toContain('OPENAI_API_KEY');
    expect(JSON.stringify(status)).not.toContain(OPENAI_KEY);
    expect(status.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    // Decrypted, as the Web UI shows it through the codec endpoint: the key must not be there either.
    const text = await historyText(history, testCodec());
    expect(text).toContain('OPENAI_API_KEY'); // the failure message is in there…
    expect(text).not.toContain(OPENAI_KEY); // …the key is not
  });

  it('a provider that is not configured fails non-retryably naming the variable to set', async () => {
    const { status } = await runAgent(api, user, { model: 'compat:llama3' });
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask', reason: 'non_retryable' });
    expect(status.error!.message).toContain('LLM_BASE_URL');
    expect(status.steps[0]!.attempts).toBe(1);
  });

  it('output_schema: an invalid answer gets one repair turn; a second miss fails the step', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'number' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const script = llm.script(uniqueId('gpt-test-'), [{ text: 'It is 42.' }, { text: '```json\n{"answer": 42}\n```' }]);
    const { status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: [], output_schema: schema });
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toEqual({ answer: 42 });
    expect(status.steps[0]).toMatchObject({ turns: 2, usage: { llm_calls: 2 } });
    expect((script.requests[0]!.body.messages as Msg[])[0]!.content).toContain(JSON.stringify(schema));
    const last = (script.requests[1]!.body.messages as Msg[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toContain('not valid JSON');

    const bad = llm.script(uniqueId('gpt-test-'), [{ text: '{"answer": "x"}' }]);
    const failed = await runAgent(api, user, { model: `openai:${bad.model}`, tools: [], output_schema: schema });
    expect(failed.status.status).toBe('failed');
    expect(bad.requests).toHaveLength(2);
    expect(failed.status.error).toMatchObject({ step_id: 'ask', reason: 'invalid_output' });
    expect(failed.status.error!.message).toContain('/answer must be number');
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
    const { status } = await runAgent(api, user, { model: `anthropic:${script.model}` });
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('42');
    expect(status.steps[0]).toMatchObject({ usage: { llm_calls: 2, input_tokens: 100, output_tokens: 10 } });
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

  it('tool output beyond the limit is truncated and handed back as data', async () => {
    sink.route('/big', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(40_000) });
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'http_fetch', args: { url: sink.url('/big') } }] },
      { text: 'a lot of x' },
    ]);
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: ['http_fetch'] });
    expect(status.status).toBe('completed');
    const toolMessage = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(toolMessage.content.length).toBeLessThan(20_000);
    expect(JSON.parse(toolMessage.content)).toMatchObject({
      truncated: true,
      original_bytes: expect.any(Number),
      preview: expect.any(String),
    });
    const tool = (await getTranscript(api, user, runId)).entries.find((e) => e.role === 'tool')!;
    expect(tool).toMatchObject({ name: 'http_fetch', truncated: true, is_error: false });
  });

  it('shows the current turn and usage while the step runs, and cancelling stops the model call', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '1+1' } }], usage: { input: 10, output: 2 } },
      { hold: new Promise(() => undefined) },
    ]);
    const workflowId = await createAgentWorkflow(api, user, { model: `openai:${script.model}` });
    const runId = await startRun(api, user, workflowId, { question: 'q' });
    await script.waitForRequests(2);
    const running = await waitForStatus(
      api,
      user,
      runId,
      (s) => (s.steps[0] as unknown as { turns: number | null }).turns === 2,
    );
    expect(running.status).toBe('running');
    expect(running.steps[0]).toMatchObject({
      status: 'running',
      turns: 2, // the turn in flight; usage counts the completed call
      usage: { llm_calls: 1, input_tokens: 10, output_tokens: 2 },
    });
    expect(running.usage).toEqual({ llm_calls: 1, input_tokens: 10, output_tokens: 2 });

    await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).expect(202);
    const cancelled = await waitForStatus(api, user, runId, isTerminal);
    expect(cancelled.status).toBe('cancelled');
    // The held HTTP call was aborted through the activity's cancellation (heartbeats deliver it).
    await until(() => script.requests[1]!.aborted, 'the held model call to be aborted');
    expect(script.requests).toHaveLength(2);
  });

  it('a large final answer travels by reference: whole in the status, not in the Temporal history', async () => {
    const answer = `${'All work and no play. '.repeat(5_000)}The end.`;
    const script = llm.script(uniqueId('gpt-test-'), [{ text: answer }]);
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: [] });
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe(answer);
    expect((await getTranscript(api, user, runId)).final_answer).toBe(answer);
    const history = await historyText(await api.temporal.workflow.getHandle(runId).fetchHistory(), testCodec());
    expect(history).toContain('stepwise_blob');
    expect(history).not.toContain('The end.');
  });

  it("a step's max_turns and output_schema override the template's, and are checked on write", async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '{"n": 7}' }]);
    const ok = await runAgent(api, user, {
      model: `openai:${script.model}`,
      max_turns: 8,
      step: { max_turns: 1, output_schema: schema },
    });
    expect(ok.status.status).toBe('completed');
    expect(ok.status.outputs.ask).toEqual({ n: 7 });
    expect((script.requests[0]!.body.messages as Msg[])[0]!.content).toContain(JSON.stringify(schema));
    expect((await getTranscript(api, user, ok.runId)).max_turns).toBe(1);

    const looping = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '1' } }] },
    ]);
    const limited = await runAgent(api, user, {
      model: `openai:${looping.model}`,
      max_turns: 8,
      step: { max_turns: 1 },
    });
    expect(limited.status.error).toMatchObject({ reason: 'turn_limit' });
    expect(looping.requests).toHaveLength(1);

    await expect(
      createAgentWorkflow(api, user, { model: 'openai:x', step: { output_schema: { type: 'nonsense' } } }),
    ).rejects.toThrow(/steps\[0\] \(ask\)\.output_schema: not a valid JSON Schema/);
    const transform = await insertTemplate(api.database.db, user.id, {
      step_type: 'action',
      action_type: 'transform',
      config: { expression: '1' },
    });
    await expect(
      createWorkflow(api, user, { name: 'x', steps: [{ id: 'shape', template_id: transform._id, max_turns: 2 }] }),
    ).rejects.toThrow(/steps\[0\] \(shape\)\.max_turns: only agent steps take max_turns/);
  });

  it('an earlier step output stored by reference reaches the model; beyond 256 KiB the step fails non-retryably', async () => {
    const transform = await insertTemplate(api.database.db, user.id, {
      step_type: 'action',
      action_type: 'transform',
      config: { expression: '$pad("", size, "x")' },
    });
    const script = llm.script(uniqueId('gpt-test-'), [{ text: 'many x' }]);
    const agent = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, tools: [] });
    const run = async (size: number) => {
      const workflowId = await createWorkflow(api, user, {
        name: 'big input',
        steps: [
          { id: 'big', template_id: transform._id, config: { data: { size } } },
          { id: 'ask', template_id: agent._id, input: '{{steps.big.output}}' },
        ],
      });
      const runId = await startRun(api, user, workflowId, {});
      return waitForStatus(api, user, runId, isTerminal);
    };

    const fits = await run(100_000); // above the 64 KiB inline limit: passed by reference
    expect(fits.status).toBe('completed');
    expect((script.requests[0]!.body.messages as Msg[])[1]!.content).toBe('x'.repeat(100_000));

    const tooBig = await run(300_000);
    expect(tooBig.status).toBe('failed');
    expect(tooBig.error).toMatchObject({ step_id: 'ask', reason: 'non_retryable' });
    expect(tooBig.error!.message).toContain('at most 262144');
    expect(script.requests).toHaveLength(1);
  });

  it('side-effecting tools: one e-mail per call, distinct even when the provider sends empty or reused call ids', async () => {
    const mail = (to: string) => ({ name: 'send_email', args: { to, subject: `hi ${to}`, text: 'hello' } });
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          { ...mail('a@example.test'), id: '' },
          { ...mail('b@example.test'), id: '' },
        ],
      },
      // A server that numbers calls per response reuses the id the first turn ended up with.
      { toolCalls: [{ ...mail('c@example.test'), id: 'call_0_0' }] },
      { text: 'sent three' },
    ]);
    const before = smtp.messages.length;
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      tools: ['send_email'],
      egress: { email_recipients: ['@example.test'] },
    });
    expect(status.status).toBe('completed');
    const received = (await smtp.waitForMessages(before + 3)).slice(before);
    expect(received.map((m) => m.envelope.to[0]).sort()).toEqual([
      'a@example.test',
      'b@example.test',
      'c@example.test',
    ]);
    expect(new Set(received.map((m) => m.messageId)).size).toBe(3);
    const toolIds = (script.requests[1]!.body.messages as { role: string; tool_call_id?: string }[])
      .filter((m) => m.role === 'tool')
      .map((m) => m.tool_call_id);
    // Blank ids were replaced by distinct ones, which the results answer.
    expect(toolIds).toHaveLength(2);
    expect(new Set(toolIds).size).toBe(2);
    expect(toolIds.every((id) => typeof id === 'string' && id !== '' && id !== 'call_0_0')).toBe(true);
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => t.is_error)).toEqual([false, false, false]);
  });
});
