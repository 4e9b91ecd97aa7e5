/**
 * R15, providers that bend the protocol, end to end: workflows created and started through the API, run by the real
 * workflow on real Temporal with a real worker and MongoDB, against the scripted model server answering the way some
 * servers and proxies do — a plain JSON completion to a streamed request, a stream without usage, a stream cut after
 * HTTP 200. No answer is lost and none is taken unread; budgets hold on estimated usage, which says it is estimated.
 *
 * A stream whose connection drops mid-answer is also retried with its partial live text voided: test/api/live-text.test.ts
 * ("a call broken mid-stream and retried"). The provider layer's own cases (Anthropic included) are in
 * test/temporal/llm/provider.test.ts.
 */
import { getTranscript, insertAgentTemplate, type TranscriptBody } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer, type ModelScript, type Script } from '../helpers/llm-server';
import { readRunEvents } from '../helpers/run-events';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus, type StatusBody } from '../helpers/workflows';
import { tokensUsedOn } from '../../db/usage';
import type { JsonObject } from '../../domain/json';

/** The daily budget of every user of this file (each case has its own user). */
const TOKENS_PER_DAY = 3_000;

interface UsageBody {
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
  estimated?: true;
}

interface BudgetBody {
  max_tokens: number;
  max_model_calls: number;
  tokens_used: number;
  model_calls_used: number;
}

describe('providers that bend the protocol (R15)', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: 'sk-test-bent-0123456789',
        OPENAI_BASE_URL: llm.baseUrl,
        LLM_BASE_URL: llm.baseUrl,
        USER_MAX_TOKENS_PER_DAY: String(TOKENS_PER_DAY),
      }),
    );
    worker = await startTestWorker(api.config, api.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  /** A one-step agent workflow (`ask`) on a fresh scripted model, through the API. */
  async function agentWorkflow(
    user: TestUser,
    provider: 'openai' | 'compat',
    script: Script,
    opts: { max_attempts?: number; config?: JsonObject } = {},
  ): Promise<{ workflowId: string; model: ModelScript }> {
    const model = llm.script(uniqueId('bent-'), script);
    const template = await insertAgentTemplate(api, user, { model: `${provider}:${model.model}`, max_turns: 10 });
    const workflowId = await createWorkflow(api, user, {
      name: 'bent provider',
      steps: [
        {
          id: 'ask',
          template_id: template._id,
          input: '{{input.question}}',
          retry: { max_attempts: opts.max_attempts ?? 1 },
        },
      ],
      ...(opts.config ? { config: opts.config } : {}),
    });
    return { workflowId, model };
  }

  async function runToEnd(user: TestUser, workflowId: string): Promise<{ runId: string; status: StatusBody }> {
    const runId = await startRun(api, user, workflowId, { question: 'What is 6 times 7?' });
    return { runId, status: await waitForStatus(api, user, runId, isTerminal, 60_000) };
  }

  /** The fields these tests read of an event (each event type has some of them). */
  interface EventData {
    text?: string;
    error?: { message: string };
    usage?: UsageBody;
  }

  async function events(runId: string, type: string): Promise<EventData[]> {
    const docs = await readRunEvents(api.database.db, runId, { afterSeq: 0, counter: 1_000, limit: 1_000 });
    return docs.filter((d) => d.type === type).map((d) => JSON.parse(d.data_json) as EventData);
  }

  const assistantUsage = (t: TranscriptBody) =>
    t.entries.filter((e) => e.role === 'assistant').map((e) => e.usage as UsageBody);

  it('a plain JSON answer to a streamed request is read whole: its tool calls run, its text is the answer, its usage counts', async () => {
    const user = await createTestUser(api.database.db);
    const { workflowId, model } = await agentWorkflow(user, 'compat', [
      {
        text: 'Let me compute.',
        toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }],
        usage: { input: 40, output: 8 },
        unstreamed: true,
      },
      { text: 'It is 42.', usage: { input: 60, output: 5 }, unstreamed: true },
    ]);
    const { runId, status } = await runToEnd(user, workflowId);

    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('It is 42.');
    // Both requests asked for a stream; both answers were plain JSON.
    expect(model.requests.map((r) => r.body.stream)).toEqual([true, true]);
    const transcript = await getTranscript(api, user, runId);
    expect(transcript.entries.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript.entries[1]).toMatchObject({
      text: 'Let me compute.',
      tool_calls: [{ name: 'calculator', args: { expression: '6*7' } }],
    });
    expect(transcript.entries[2]).toMatchObject({ name: 'calculator', result: { result: 42 }, is_error: false });
    expect(transcript.final_answer).toBe('It is 42.');
    // The provider's counts, as reported: nothing estimated.
    expect(status.usage).toEqual({ llm_calls: 2, input_tokens: 100, output_tokens: 13 });
    expect(await tokensUsedOn(api.database.db, user.id, new Date())).toBe(113);
    // The live text of an answer read at once is the whole text, at once.
    const deltas = await events(runId, 'agent.text.delta');
    expect(deltas.map((d) => d.text).join('')).toBe('Let me compute.It is 42.');
  });

  it('a JSON answer that is no completion fails the attempt with a retryable provider error; the retry is read', async () => {
    const user = await createTestUser(api.database.db);
    const { workflowId, model } = await agentWorkflow(
      user,
      'openai',
      [
        { status: 200, message: 'upstream busy' },
        { text: 'done', unstreamed: true },
      ],
      { max_attempts: 2 },
    );
    const { runId, status } = await runToEnd(user, workflowId);

    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('done');
    expect(status.steps[0]).toMatchObject({ status: 'completed', attempts: 2 });
    expect(model.requests).toHaveLength(2);
    const [retrying] = await events(runId, 'step.retrying');
    expect(retrying?.error?.message).toContain('answered a streamed request with JSON that is not a chat completion');
  });

  it('a stream without usage counts estimated tokens, marked as such, and the run stops at its max_tokens', async () => {
    const user = await createTestUser(api.database.db);
    // Every answer: 1 600 characters and a tool call, no usage. Estimated, one call stays under 1 000 tokens and two
    // go over; counted as 0, the loop would go on to max_turns (10).
    const { workflowId, model } = await agentWorkflow(
      user,
      'openai',
      [{ text: 'x'.repeat(1_600), toolCalls: [{ name: 'calculator', args: { expression: '1+1' } }], usage: null }],
      { config: { budget: { max_tokens: 1_000 } } },
    );
    const { runId, status } = await runToEnd(user, workflowId);

    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask', reason: 'budget_exceeded' });
    expect(model.requests).toHaveLength(2);
    const transcript = await getTranscript(api, user, runId);
    const calls = assistantUsage(transcript);
    expect(calls).toHaveLength(2);
    // The output estimate: the answer's characters (text, tool name, arguments as JSON) / 4, rounded up.
    const outputChars = 1_600 + 'calculator'.length + JSON.stringify({ expression: '1+1' }).length;
    for (const call of calls) {
      expect(call).toMatchObject({ output_tokens: Math.ceil(outputChars / 4), estimated: true });
      expect(call.input_tokens).toBeGreaterThan(0);
    }
    const input = calls[0]!.input_tokens + calls[1]!.input_tokens;
    const output = calls[0]!.output_tokens + calls[1]!.output_tokens;
    expect(calls[0]!.input_tokens + calls[0]!.output_tokens).toBeLessThan(1_000);
    const usage = { llm_calls: 2, input_tokens: input, output_tokens: output, estimated: true };
    expect(status.usage).toEqual(usage);
    expect(transcript.usage).toEqual(usage);
    expect(status.steps[0]).toMatchObject({ usage });
    expect(status.budget as BudgetBody).toMatchObject({ max_tokens: 1_000, tokens_used: input + output });
    expect(await tokensUsedOn(api.database.db, user.id, new Date())).toBe(input + output);
    const turns = await events(runId, 'agent.model_call');
    expect(turns.map((t) => t.usage)).toEqual(calls);
    const [ended] = await events(runId, 'run.ended');
    expect(ended?.usage).toEqual(usage);
  });

  it('the daily token budget holds on estimated usage', async () => {
    const user = await createTestUser(api.database.db);
    // 14 000 characters: 3 500 estimated output tokens, over the day's 3 000 in one call.
    const { workflowId, model } = await agentWorkflow(user, 'compat', [{ text: 'y'.repeat(14_000), usage: null }]);

    // The first run may overshoot (the check is before each call); it completes and is counted.
    const first = await runToEnd(user, workflowId);
    expect(first.status.status).toBe('completed');
    expect(first.status.usage).toMatchObject({ llm_calls: 1, output_tokens: 3_500, estimated: true });
    const used = await tokensUsedOn(api.database.db, user.id, new Date());
    const shown = first.status.usage as UsageBody;
    expect(used).toBe(shown.input_tokens + shown.output_tokens);

    const second = await runToEnd(user, workflowId);
    expect(second.status.status).toBe('failed');
    expect(second.status.error).toMatchObject({ step_id: 'ask', reason: 'budget_exceeded' });
    expect(second.status.error?.message).toContain(`USER_MAX_TOKENS_PER_DAY is ${TOKENS_PER_DAY}`);
    expect(model.requests).toHaveLength(1);
  });

  it('a stream cut after HTTP 200 is never taken for the answer: cleanly ended or dropped, the retry answers', async () => {
    const user = await createTestUser(api.database.db);
    const whole = 'The whole answer, which the first attempt never finished.';
    const cut = (plan: { endAfter: number } | { breakAfter: number }) =>
      agentWorkflow(user, 'openai', [{ text: whole, stream: { chunkChars: 4, ...plan } }, { text: whole }], {
        max_attempts: 2,
      });
    const [ended, dropped] = await Promise.all([cut({ endAfter: 12 }), cut({ breakAfter: 12 })]);
    const runs = await Promise.all([runToEnd(user, ended.workflowId), runToEnd(user, dropped.workflowId)]);

    for (const { runId, status } of runs) {
      expect(status.status).toBe('completed');
      expect(status.outputs.ask).toBe(whole);
      expect(status.steps[0]).toMatchObject({ status: 'completed', attempts: 2 });
      const transcript = await getTranscript(api, user, runId);
      expect(transcript.entries.filter((e) => e.role === 'assistant')).toHaveLength(1);
      expect(transcript.final_answer).toBe(whole);
      expect(await events(runId, 'step.retrying')).toHaveLength(1);
    }
    const [retrying] = await events(runs[0].runId, 'step.retrying');
    expect(retrying?.error?.message).toContain('ended its answer before finishing it');
  });
});
