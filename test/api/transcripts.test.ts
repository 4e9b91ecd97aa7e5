/** The transcript view of an agent step through the real app: content, paging, owner isolation. */
import { getTranscript, insertAgentTemplate } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('GET /api/v1/workflows/runs/:runId/steps/:stepId/transcript', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let owner: TestUser;
  let other: TestUser;
  let runId: string;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: 'sk-test-transcript-key-000',
        OPENAI_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    [owner, other] = await Promise.all([createTestUser(api.database.db), createTestUser(api.database.db)]);
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 20, output: 3 } },
      { text: '42', usage: { input: 30, output: 1 } },
    ]);
    const agent = await insertAgentTemplate(api, owner, { model: `openai:${script.model}` });
    const transform = await insertTemplate(api.database.db, owner.id, {
      step_type: 'action',
      action_type: 'transform',
      config: { expression: '"answer: " & $' },
    });
    const workflowId = await createWorkflow(api, owner, {
      name: 'agent then action',
      steps: [
        { id: 'ask', template_id: agent._id, input: '{{input.question}}' },
        { id: 'note', template_id: transform._id, config: { data: '{{steps.ask.output}}' } },
      ],
    });
    runId = await startRun(api, owner, workflowId, { question: 'What is 6 times 7?' });
    const status = await waitForStatus(api, owner, runId, isTerminal);
    // A workflow mixing an agent step and an action step that reads the agent's answer.
    if (status.status !== 'completed' || status.outputs.note !== 'answer: 42')
      throw new Error(`run ended ${JSON.stringify(status)}`);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  const path = (run: string, step: string) => `/api/v1/workflows/runs/${run}/steps/${step}/transcript`;

  it('shows the system prompt, each turn with tool calls and usage, tool results and the final answer', async () => {
    const t = await getTranscript(api, owner, runId);
    expect(t).toMatchObject({
      run_id: runId,
      step_id: 'ask',
      status: 'completed',
      tools: ['calculator'],
      max_turns: 8,
      turns: 2,
      usage: { llm_calls: 2, input_tokens: 50, output_tokens: 4 },
      final_answer: '42',
    });
    expect(t.model).toMatch(/^openai:gpt-/);
    expect(t.system_prompt).toContain('1. Read the question');
    expect(t.entries.map((e: { role: string }) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(t.entries[0]).toMatchObject({ role: 'user', text: 'What is 6 times 7?' });
    expect(t.entries[1]).toMatchObject({
      role: 'assistant',
      turn: 1,
      tool_calls: [{ name: 'calculator', args: { expression: '6*7' } }],
      usage: { input_tokens: 20 },
    });
    expect(t.entries[2]).toMatchObject({
      role: 'tool',
      name: 'calculator',
      args: { expression: '6*7' },
      result: { result: 42 },
      is_error: false,
    });
    expect(t.entries[3]).toMatchObject({ role: 'assistant', turn: 2, text: '42', final: true });
  });

  it('pages the entries with a Link header', async () => {
    const first = await api.http
      .get(`${path(runId, 'ask')}?limit=3`)
      .set(owner.auth)
      .expect(200);
    expect(first.body.data.entries.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3]);
    const link = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '');
    expect(link).not.toBeNull();
    const next = new URL(link![1]!);
    const second = await api.http.get(`${next.pathname}${next.search}`).set(owner.auth).expect(200);
    expect(second.body.data.entries.map((e: { seq: number }) => e.seq)).toEqual([4]);
    expect(second.headers.link).toBeUndefined();
  });

  it("answers 404 for another user's run, an unknown step, an action step and an unknown run; 401 without a key", async () => {
    for (const [url, who] of [
      [path(runId, 'ask'), other],
      [path(runId, 'nope'), owner],
      [path(runId, 'note'), owner],
      [path('run_doesnotexist1', 'ask'), owner],
    ] as const) {
      const res = await api.http.get(url).set(who.auth).expect(404);
      expect(res.body).toEqual({ data: null, error: expect.any(String) });
    }
    await api.http.get(path(runId, 'ask')).expect(401);
  });
});
