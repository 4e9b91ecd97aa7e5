/**
 * A thread's turn across a worker SIGKILL mid-reply: the model call in flight dies with the worker; a new worker
 * retries it and answers the turn once; the message queued behind it then runs from the new worker. No message or
 * reply is lost or doubled.
 */
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { insertTemplate } from '../helpers/workflows';

describe('a thread turn across a worker kill -9', () => {
  let llm: LlmServer;
  let api: TestApi;
  let user: TestUser;
  const workers: WorkerProcess[] = [];

  const newWorker = async () => {
    const w = spawnWorker(api.config, { OPENAI_API_KEY: 'sk-test-thread-kill', OPENAI_BASE_URL: llm.baseUrl });
    workers.push(w);
    await w.ready;
    return w;
  };

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: 'sk-test-thread-kill', OPENAI_BASE_URL: llm.baseUrl }));
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

  it('resumes the turn in a new worker, answers it once, then runs the queued message', async () => {
    // The first call never answers (the worker dies while it waits); the retried one and the next turn do.
    const model = llm.script(uniqueId('kill-'), (_req, i) =>
      i === 0 ? { hold: new Promise(() => undefined) } : { text: `answer ${i}` },
    );
    const tpl = await insertTemplate(api.database.db, user.id, {
      step_type: 'agent',
      name: uniqueId('kill agent '),
      default_prompt: 'Answer.',
      default_tools: [],
      default_tasks: [],
      model: `openai:${model.model}`,
    });
    const id = (await api.http.post('/api/v1/threads').set(user.auth).send({ template: tpl._id })).body.data
      .id as string;
    const first = await newWorker();
    const sent = await api.http.post(`/api/v1/threads/${id}/messages`).set(user.auth).send({ text: 'one' });
    expect(sent.status).toBe(202);
    await model.waitForRequests(1, 30_000);
    const queued = await api.http
      .post(`/api/v1/threads/${id}/messages`)
      .set(user.auth)
      .send({ text: 'two', policy: 'enqueue' });
    expect(queued.body.data).toMatchObject({ turn: 2, status: 'queued' });
    first.kill('SIGKILL');
    await first.exited;

    await newWorker();
    const until = Date.now() + 90_000;
    let thread: Record<string, unknown> = {};
    while (Date.now() < until) {
      thread = (await api.http.get(`/api/v1/threads/${id}`).set(user.auth)).body.data;
      if (thread.turns === 2 && thread.running_turn === null && thread.queued === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(thread).toMatchObject({ turns: 2, running_turn: null, queued: 0, message_count: 4 });
    const conv = (await api.http.get(`/api/v1/threads/${id}/messages`).set(user.auth)).body.data as {
      role: string;
      text: string | null;
      status?: string;
    }[];
    expect(conv.map((m) => [m.role, m.text])).toEqual([
      ['user', 'one'],
      ['assistant', 'answer 1'],
      ['user', 'two'],
      ['assistant', 'answer 2'],
    ]);
    expect(conv.filter((m) => m.role === 'user').map((m) => m.status)).toEqual(['completed', 'completed']);
  }, 150_000);
});
