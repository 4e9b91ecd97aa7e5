/**
 * A workflow's agent step in a thread (decision 0603) whose worker is killed (SIGKILL) mid-turn, after its tool call:
 * a new worker finishes the step in the same turn, and the thread holds the exchange once — one user message, one
 * tool call with its result, one reply — with the turn's usage counted once.
 */
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { spawnWorker, type WorkerProcess } from '../../helpers/worker-process';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

const OPENAI_KEY = 'sk-test-thread-step-crash-0123456789';

describe('an agent step in a thread survives a worker crash', () => {
  let llm: LlmServer;
  let api: TestApi;
  let user: TestUser;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl }));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await api?.close();
    await llm?.close();
  });

  it('finishes the turn it took; the thread has the exchange once', async () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, LLM_BASE_URL: llm.baseUrl };
    const script = llm.script(uniqueId('gpt-thread-step-'), (_req, index) => {
      if (index === 0) return { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] };
      // The second call is held open until the worker that made it is killed.
      if (index === 1) return { hold: new Promise(() => undefined) };
      return { text: 'It is 42.' };
    });
    const tpl = await insertTemplate(api.database.db, user.id, {
      step_type: 'agent',
      name: uniqueId('crash agent '),
      default_prompt: 'Answer.',
      default_tools: ['calculator'],
      default_tasks: [],
      model: `openai:${script.model}`,
    });
    const created = await api.http.post('/api/v1/threads').set(user.auth).send({ template: tpl._id });
    const thread = created.body.data.id as string;
    const wf = await createWorkflow(api, user, {
      name: uniqueId('crash in thread '),
      steps: [
        {
          id: 'ask',
          template_id: tpl._id,
          thread: '{{input.thread_id}}',
          input: 'What is 6*7?',
          timeout_seconds: 20,
        },
      ],
    });

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const runId = await startRun(api, user, wf, { thread_id: thread });
    await script.waitForRequests(2, 45_000);
    first.kill('SIGKILL');
    await first.exited;

    workers.push(spawnWorker(api.config, env));
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('It is 42.');

    const res = await api.http.get(`/api/v1/threads/${thread}/messages?limit=200`).set(user.auth);
    const conv = res.body.data as Record<string, unknown>[];
    expect(conv.map((m) => [m.turn, m.role])).toEqual([
      [1, 'user'],
      [1, 'assistant'],
      [1, 'tool'],
      [1, 'assistant'],
    ]);
    expect(conv[0]).toMatchObject({ run_id: runId, step_id: 'ask', status: 'completed' });
    const t = (await api.http.get(`/api/v1/threads/${thread}`).set(user.auth)).body.data as Record<string, unknown>;
    expect(t).toMatchObject({ turns: 1, message_count: 4, running_turn: null });
    // Two answered calls (the interrupted one answered nothing).
    expect(t.usage).toMatchObject({ llm_calls: 2 });
    // The turn was taken once: one joinThread that took it, one leaveThread.
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n) => n === 'joinThread' || n === 'leaveThread');
    expect(scheduled).toEqual(['joinThread', 'leaveThread']);
  }, 150_000);
});
