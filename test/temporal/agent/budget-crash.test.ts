/**
 * Budget reservations are durable: a worker killed (SIGKILL) while two reserved model calls of a map are in flight,
 * and a new worker that rebuilds the run from its history, still lets only `max_model_calls` distinct calls reach the
 * model. The interrupted calls are retried under the reservations they already hold; the next item takes the last
 * call, and the one after it is refused.
 */
import { insertAgentTemplate } from '../../helpers/agent-runs';
import { startLlmServer, type LlmServer, type RecordedRequest } from '../../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { spawnWorker, type WorkerProcess } from '../../helpers/worker-process';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

const OPENAI_KEY = 'sk-test-budget-crash-0123456789';

/** The map item a request is for: its user message is the item (`item <i>`). */
function itemOf(request: RecordedRequest): string | undefined {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const user = messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? /item \d+/.exec(user.content)?.[0] : undefined;
}

describe('budget reservations survive a worker crash', () => {
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

  it('a new worker keeps the reservations the killed one took', async () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl };
    // The first two calls are held open until the worker that made them is killed; every later one answers.
    const script = llm.script(uniqueId('gpt-test-'), (_req, index) =>
      index < 2 ? { hold: new Promise(() => undefined) } : { text: 'done', usage: { input: 10, output: 5 } },
    );
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, max_turns: 2 });
    const workflowId = await createWorkflow(api, user, {
      name: 'budget crash',
      steps: [
        {
          id: 'each',
          template_id: template._id,
          input: '{{map.item}}',
          // A killed worker's calls are retried once their heartbeat times out (6 s).
          timeout_seconds: 6,
          retry: { max_attempts: 3 },
          map: { over: '{{input.items}}', concurrency: 2, on_item_error: 'continue' },
        },
      ],
      config: { budget: { max_model_calls: 3 } },
    });

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const runId = await startRun(api, user, workflowId, { items: ['item 0', 'item 1', 'item 2', 'item 3'] });
    await script.waitForRequests(2, 45_000);
    first.kill('SIGKILL');
    await first.exited;

    workers.push(spawnWorker(api.config, env));
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);

    expect(status.status).toBe('completed');
    // Items 0 and 1 twice (the interrupted call and its retry), item 2 once, item 3 never.
    expect(script.requests.map(itemOf).sort()).toEqual(['item 0', 'item 0', 'item 1', 'item 1', 'item 2']);
    const results = status.outputs.each as unknown[];
    expect(JSON.stringify(results[3])).toContain('budget_exceeded');
    expect(status.usage).toEqual({ llm_calls: 3, input_tokens: 30, output_tokens: 15 });
    expect(status.budget).toMatchObject({ max_model_calls: 3, model_calls_used: 3 });
  }, 150_000);
});
