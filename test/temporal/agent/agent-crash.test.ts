/**
 * A worker killed (SIGKILL) between two model calls: a new worker finishes the run, and the scripted LLM server saw
 * each completed turn's call exactly once plus the interrupted one; the tool's side effect happened once.
 */
import { RUN_WORKFLOW_TYPE } from '../../../temporal/contract/task-queue';
import { newRunDoc, runsCollection } from '../../../db/runs';
import { agentStep, runSnapshot, transcriptOf } from '../../helpers/agent-runs';
import { startHttpSink, type HttpSink } from '../../helpers/http-sink';
import { startLlmServer, type LlmServer } from '../../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../../helpers/stack';
import { spawnWorker, type WorkerProcess } from '../../helpers/worker-process';

const OPENAI_KEY = 'sk-test-agentloop-crash-0123456789';

describe('agent step survives a worker crash between model calls', () => {
  let llm: LlmServer;
  let sink: HttpSink;
  let api: TestApi;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    [llm, sink] = await Promise.all([
      startLlmServer(),
      startHttpSink({ '/page': { status: 200, body: { page: 'stepwise' } } }),
    ]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: sink.host }),
    );
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
    const script = llm.script(uniqueId('gpt-'), (_req, index) => {
      if (index === 0)
        return {
          toolCalls: [{ name: 'http_fetch', args: { url: sink.url('/page') } }],
          usage: { input: 50, output: 5 },
        };
      // The second call is held open until the worker that made it is killed.
      if (index === 1) return { hold: new Promise(() => undefined) };
      return { text: 'The page says stepwise.', usage: { input: 80, output: 7 } };
    });
    const snapshot = runSnapshot(
      [agentStep({ model: `openai:${script.model}`, tools: ['http_fetch'], timeout_seconds: 20 })],
      { question: 'What does the page say?' },
    );
    const { db } = api.database;
    await runsCollection(db).insertOne(
      newRunDoc({ snapshot, namespace: api.config.TEMPORAL_NAMESPACE, taskQueue: api.config.TEMPORAL_TASK_QUEUE }),
    );

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const handle = await api.temporal.workflow.start(RUN_WORKFLOW_TYPE, {
      taskQueue: api.config.TEMPORAL_TASK_QUEUE,
      workflowId: snapshot.run_id,
      args: [snapshot],
    });

    await script.waitForRequests(2, 45_000);
    expect(sink.requestsTo('/page')).toHaveLength(1);
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker(api.config, env);
    workers.push(second);
    await handle.result();

    // Turn 1 once, turn 2 twice (the interrupted call and its retry), the tool's request once.
    expect(script.requests).toHaveLength(3);
    expect(script.requests[2]!.body.messages).toEqual(script.requests[1]!.body.messages);
    expect(sink.requestsTo('/page')).toHaveLength(1);

    const doc = await runsCollection(db).findOne({ _id: snapshot.run_id });
    expect(doc).toMatchObject({
      status: 'completed',
      steps: [{ status: 'completed', turns: 2, usage: { llm_calls: 2, input_tokens: 130, output_tokens: 12 } }],
    });
    expect(JSON.parse(doc!.steps[0]!.output_json!)).toBe('The page says stepwise.');
    const transcript = await transcriptOf(db, snapshot.run_id);
    expect(transcript.map((e) => e.kind)).toEqual(['setup', 'user', 'assistant', 'tool', 'assistant']);
    expect(transcript[4]).toMatchObject({ kind: 'assistant', final: true, attempt: 2 });

    // Each model and tool call is its own activity in the history; only the interrupted one has a second attempt.
    const history = await handle.fetchHistory();
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
