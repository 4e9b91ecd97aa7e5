/**
 * Tracing end to end with the real entrypoints: an API process and a worker process export to an in-process OTLP
 * receiver. One agent run started by `POST …/run` is one trace: the request's server span, the client's workflow
 * start, the workflow, each activity (local ones included) and the model call under its activity. The run status
 * names that trace, and the log lines of both processes carry its id. With tracing off, nothing is created.
 */
import { startTracing } from '../../shared/tracing';
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { spawnApi, type ApiProcess } from '../helpers/api-process';
import { Worker } from '@temporalio/worker';
import { startTestApi, testConfig, testDataConverter, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { waitFor } from '../../devstack/process';

const OPENAI_KEY = 'sk-test-tracing-0123456789abcdef';

describe('tracing', () => {
  it('is off without an OTLP endpoint: no provider, no exporter', () => {
    expect(startTracing({}, 'stepwise-test')).toBeUndefined();
    expect(
      startTracing({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }, 'stepwise-test'),
    ).toBeUndefined();
  });

  describe('with an OTLP endpoint', () => {
    let llm: LlmServer;
    let receiver: OtlpReceiver;
    let api: TestApi;
    let user: TestUser;
    let apiProcess: ApiProcess | undefined;
    let worker: WorkerProcess | undefined;

    beforeAll(async () => {
      [llm, receiver] = await Promise.all([startLlmServer(), startOtlpReceiver()]);
      // The in-process API only seeds the database (user, workflow); the run goes through the spawned one.
      api = await startTestApi(testConfig());
      user = await createTestUser(api.database.db);
      const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
      apiProcess = await spawnApi(api.config, otel);
      worker = spawnWorker(api.config, {
        ...otel,
        OPENAI_API_KEY: OPENAI_KEY,
        OPENAI_BASE_URL: llm.baseUrl,
        LOG_LEVEL: 'debug',
      });
      await Promise.all([apiProcess.ready, worker.ready]);
    }, 90_000);
    afterAll(async () => {
      worker?.kill('SIGKILL');
      await worker?.exited;
      await apiProcess?.kill();
      await api?.close();
      await Promise.all([llm?.close(), receiver?.close()]);
    });

    it('follows one run from POST …/run through the workflow to each activity and the model call', async () => {
      const script = llm.script(uniqueId('gpt-trace-'), [{ text: 'Forty-two.', usage: { input: 9, output: 2 } }]);
      const workflowId = await createAgentWorkflow(api, user, { model: `openai:${script.model}`, tools: [] });
      const startRes = await fetch(`${apiProcess!.url}/api/v1/workflows/${workflowId}/run`, {
        method: 'POST',
        headers: { ...user.auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ input: { question: 'What is 6 times 7?' } }),
      });
      expect(startRes.status).toBe(202);
      const runId = ((await startRes.json()) as { data: { run_id: string } }).data.run_id;

      let status: { status: string; trace_id: string | null } = { status: 'queued', trace_id: null };
      await waitFor(
        'the run to end',
        async () => {
          const res = await fetch(`${apiProcess!.url}/api/v1/workflows/runs/${runId}/status`, { headers: user.auth });
          status = ((await res.json()) as { data: typeof status }).data;
          return ['completed', 'failed', 'cancelled', 'timed_out'].includes(status.status);
        },
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      expect(status.status).toBe('completed');
      expect(status.trace_id).toMatch(/^[0-9a-f]{32}$/);
      const traceId = status.trace_id!;

      const inTrace = (): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === traceId);
      const named = (name: string) => inTrace().find((s) => s.name === name);
      const expected = [
        'POST /api/v1/workflows/:id/run',
        'StartWorkflow:runWorkflow',
        'RunWorkflow:runWorkflow',
        'StartActivity:callModel',
        'RunActivity:callModel',
        `model openai:${script.model}`,
      ];
      // Batches are exported every few seconds: wait until every expected span has arrived.
      await waitFor('the spans of the run', () => expected.every((n) => named(n) !== undefined), {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      const spans = inTrace();
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const parentName = (name: string) => byId.get(named(name)!.parentSpanId ?? '')?.name;
      expect(named('POST /api/v1/workflows/:id/run')).toMatchObject({
        service: 'stepwise-api',
        parentSpanId: undefined,
      });
      expect(parentName('StartWorkflow:runWorkflow')).toBe('POST /api/v1/workflows/:id/run');
      expect(parentName('RunWorkflow:runWorkflow')).toBe('StartWorkflow:runWorkflow');
      expect(parentName('StartActivity:callModel')).toBe('RunWorkflow:runWorkflow');
      expect(parentName('RunActivity:callModel')).toBe('StartActivity:callModel');
      expect(parentName(`model openai:${script.model}`)).toBe('RunActivity:callModel');
      expect(named('RunActivity:callModel')!.service).toBe('stepwise-worker');
      // Every activity of the run is in this trace. A one-step agent run has four: the workflow's record of the step's
      // start, its model call, the record of the step's end (local activities, like the record of the run's end).
      const activities = spans.filter((s) => s.name.startsWith('StartActivity:')).map((s) => s.name);
      expect(activities).toEqual([
        'StartActivity:projectStep',
        'StartActivity:callModel',
        'StartActivity:projectStep',
        'StartActivity:recordOutcome',
      ]);
      // One trace: every span's parent is in it, except the request's root.
      expect(spans.filter((s) => s.parentSpanId !== undefined && !byId.has(s.parentSpanId)).map((s) => s.name)).toEqual(
        [],
      );

      // A traced execution replays deterministically with the bundle (its start headers switch the interceptors on).
      const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(Object.keys(started?.header?.fields ?? {})).toContain('_tracer-data');
      await Worker.runReplayHistory(
        {
          workflowBundle: { codePath: process.env.STEPWISE_TEST_BUNDLE! },
          dataConverter: testDataConverter(),
          // What the workflow exports is dropped here (a replay exports nothing anyway).
          sinks: { exporter: { export: { fn: () => undefined } } },
        },
        history,
        runId,
      );

      // The log lines of both processes name the trace.
      const linesWith = (output: string) =>
        output
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg?: string; trace_id?: string; span_id?: string })
          .filter((l) => l.trace_id === traceId);
      expect(linesWith(apiProcess!.output()).map((l) => l.msg)).toEqual(
        expect.arrayContaining(['run started', 'request']),
      );
      const workerLines = linesWith(worker!.output());
      expect(workerLines.map((l) => l.msg)).toContain('model call done');
      expect(workerLines.every((l) => /^[0-9a-f]{16}$/.test(l.span_id ?? ''))).toBe(true);
    }, 180_000);
  });
});
