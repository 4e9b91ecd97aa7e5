/**
 * A worker killed (SIGKILL) between two model calls: a new worker finishes the run, and the scripted LLM server saw
 * each completed turn's call exactly once plus the interrupted one; the tool's side effect happened once.
 */
import { createAgentWorkflow, getTranscript } from '../../helpers/agent-runs';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { spawnWorker, type WorkerProcess } from '../../helpers/worker-process';
import { isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

const OPENAI_KEY = 'sk-test-agentloop-crash-0123456789';

describe('agent step survives a worker crash between model calls', () => {
  let llm: LlmServer;
  let sink: HttpSink;
  let api: TestApi;
  let user: TestUser;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    [llm, sink] = await Promise.all([
      startLlmServer(),
      startHttpSink({ '/page': { status: 200, body: { page: 'stepwise' } } }),
    ]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: sink.host }),
    );
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await api?.close();
    await Promise.all([llm?.close(), sink?.close()]);
  });

  it('resumes at the interrupted model call and repeats nothing that completed', async () => {
    const env = {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: llm.baseUrl,
      HTTP_ALLOWED_HOSTS: sink.host,
      LLM_BASE_URL: llm.baseUrl,
    };
    const script = llm.script(uniqueId('gpt-test-'), (_req, index) => {
      if (index === 0)
        return {
          toolCalls: [{ name: 'http_fetch', args: { url: sink.url('/page') } }],
          usage: { input: 50, output: 5 },
        };
      // The second call is held open until the worker that made it is killed.
      if (index === 1) return { hold: new Promise(() => undefined) };
      return { text: 'The page says stepwise.', usage: { input: 80, output: 7 } };
    });
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      tools: ['http_fetch'],
      timeout_seconds: 20,
    });

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const runId = await startRun(api, user, workflowId, { question: 'What does the page say?' });

    await script.waitForRequests(2, 45_000);
    expect(sink.requestsTo('/page')).toHaveLength(1);
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker(api.config, env);
    workers.push(second);
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('The page says stepwise.');
    expect(status.steps[0]).toMatchObject({
      status: 'completed',
      turns: 2,
      usage: { llm_calls: 2, input_tokens: 130, output_tokens: 12 },
    });

    // Turn 1 once, turn 2 twice (the interrupted call and its retry), the tool's request once.
    expect(script.requests).toHaveLength(3);
    expect(script.requests[2]!.body.messages).toEqual(script.requests[1]!.body.messages);
    expect(sink.requestsTo('/page')).toHaveLength(1);

    const transcript = await getTranscript(api, user, runId);
    expect(transcript.entries.map((e) => e.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(transcript.entries[2]).toMatchObject({ name: 'http_fetch', result: { status: 200 }, is_error: false });

    // Each model and tool call is its own activity in the history; only the interrupted one has a second attempt.
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => n === 'callModel' || n === 'callTool');
    expect(scheduled).toEqual(['callModel', 'callTool', 'callModel']);
    const startedAttempts = (history.events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes?.attempt)
      .filter((a) => a != null);
    expect(Math.max(...startedAttempts)).toBe(2);
  }, 120_000);
});
