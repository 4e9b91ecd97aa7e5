/**
 * One agent run (a tool call, then the answer) through the API and a real worker process: the worker's /metrics has
 * the Stepwise series with the run's values (one completed agent run, two model-call attempts, the scripted token
 * counts, one tool call), the Temporal SDK's own port has the worker series operators alert on (task slots, activity
 * latency, schedule-to-start, sticky cache), the API's /metrics counts the start, the requests and the status reads —
 * and no label of any process holds an id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { freePort, waitFor } from '../../devstack/process';
import { repoRoot } from '../helpers/run-node';
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { parseProm, sampleValue, scrape, type Sample } from '../helpers/prom-text';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { isTerminal, waitForStatus } from '../helpers/workflows';

const OPENAI_KEY = 'sk-test-observability-0123456789';

/** The label names of every Stepwise metric (histograms add `le` to their buckets): anything else is a new label. */
const STEPWISE_LABELS: Record<string, string[]> = {
  stepwise_runs_started_total: ['kind'],
  stepwise_runs_finished_total: ['kind', 'reason', 'status'],
  stepwise_run_duration_seconds: ['kind', 'status'],
  stepwise_step_attempts_total: ['action_type', 'kind', 'outcome'],
  stepwise_step_attempt_duration_seconds: ['action_type', 'kind', 'outcome'],
  stepwise_step_failures_total: ['final', 'reason'],
  stepwise_model_calls_total: ['model', 'outcome', 'provider'],
  stepwise_model_call_duration_seconds: ['model', 'provider'],
  stepwise_model_tokens_total: ['direction', 'model', 'provider'],
  stepwise_tool_calls_total: ['outcome', 'tool'],
  stepwise_ssrf_refusals_total: ['via'],
  stepwise_http_requests_total: ['code', 'method', 'route', 'status'],
  stepwise_http_request_duration_seconds: ['method', 'route'],
  stepwise_idempotent_replays_total: [],
  stepwise_status_reads_total: [],
  stepwise_status_read_checks_total: [],
  stepwise_db_commands_total: ['collection', 'command'],
  stepwise_temporal_calls_total: ['method'],
};

/** Metric names the dashboard's queries and the alert rules use (histogram series by their base name). */
function metricNamesOf(text: string): string[] {
  return [
    ...new Set([...text.matchAll(/\b((?:stepwise|temporal)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_bucket$/, ''))),
  ];
}

/** Every metric a scrape declares (`# TYPE` lines), also those with no sample yet (a counter never incremented). */
async function declaredNames(url: string): Promise<Set<string>> {
  const text = await (await fetch(url)).text();
  const names = new Set(parseProm(text).map((s) => baseName(s.name)));
  for (const m of text.matchAll(/^# TYPE (\S+)/gm)) names.add(m[1]!);
  return names;
}

function baseName(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

/**
 * SDK counters the Temporal Runtime only exports once they first count: a clean short run has no workflow task
 * failure and no sticky cache miss. Their names are the ones the SDK's core defines (`workflow_task_execution_failed`,
 * `sticky_cache_miss`), with the `temporal_` prefix and `_total` suffix the Runtime is configured with.
 */
const EMITTED_ON_FIRST_EVENT = new Set([
  'temporal_workflow_task_execution_failed_total',
  'temporal_sticky_cache_miss_total',
]);

describe('metrics of a run', () => {
  let llm: LlmServer;
  let sink: HttpSink;
  let api: TestApi;
  let user: TestUser;
  let worker: WorkerProcess | undefined;
  let healthPort: number;
  let sdkPort: number;

  beforeAll(async () => {
    [llm, sink] = await Promise.all([
      startLlmServer(),
      startHttpSink({ '/page': { status: 200, body: { page: 'stepwise' } } }),
    ]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: sink.host }),
    );
    user = await createTestUser(api.database.db);
    [healthPort, sdkPort] = [await freePort(), await freePort()];
    worker = spawnWorker(api.config, {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: llm.baseUrl,
      HTTP_ALLOWED_HOSTS: sink.host,
      WORKER_HEALTH_PORT: String(healthPort),
      WORKER_TEMPORAL_METRICS_PORT: String(sdkPort),
    });
    await worker.ready;
  }, 90_000);
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await worker?.exited;
    await api?.close();
    await Promise.all([llm?.close(), sink?.close()]);
  });

  it('counts the run, its model calls, tokens and tool call, with the SDK worker series beside them', async () => {
    const script = llm.script(uniqueId('gpt-metrics-'), (_req, index) =>
      index === 0
        ? { toolCalls: [{ name: 'http_fetch', args: { url: sink.url('/page') } }], usage: { input: 50, output: 5 } }
        : { text: 'The page says stepwise.', usage: { input: 80, output: 7 } },
    );
    const workflowId = await createAgentWorkflow(api, user, { model: `openai:${script.model}`, tools: ['http_fetch'] });
    // Started twice with one Idempotency-Key: one run, one replay.
    const key = uniqueId('idem');
    const send = () =>
      api.http
        .post(`/api/v1/workflows/${workflowId}/run`)
        .set(user.auth)
        .set('Idempotency-Key', key)
        .send({ input: { question: 'What does the page say?' } });
    const first = await send();
    expect(first.status).toBe(202);
    const runId = (first.body as { data: { run_id: string } }).data.run_id;
    const again = await send();
    expect({ status: again.status, run: (again.body as { data: { run_id: string } }).data.run_id }).toEqual({
      status: 202,
      run: runId,
    });
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);
    expect(status.status).toBe('completed');
    // Tracing is off here (no OTLP endpoint): the run names no trace and no log line carries trace ids.
    expect(status.trace_id).toBeNull();
    expect(worker!.output()).not.toContain('"trace_id"');

    const healthUrl = `http://127.0.0.1:${healthPort}/metrics`;
    // The counter follows the outcome write that the status read already sees: poll for it.
    let stepwise: Sample[] = [];
    await waitFor('the finished run in the worker metrics', async () => {
      stepwise = await scrape(healthUrl);
      return sampleValue(stepwise, 'stepwise_runs_finished_total', { kind: 'agent', status: 'completed' }) === 1;
    });
    const model = { provider: 'openai', model: script.model };
    expect(sampleValue(stepwise, 'stepwise_model_calls_total', { ...model, outcome: 'ok' })).toBe(2);
    expect(sampleValue(stepwise, 'stepwise_model_tokens_total', { ...model, direction: 'input' })).toBe(130);
    expect(sampleValue(stepwise, 'stepwise_model_tokens_total', { ...model, direction: 'output' })).toBe(12);
    expect(sampleValue(stepwise, 'stepwise_model_call_duration_seconds_count', model)).toBe(2);
    expect(sampleValue(stepwise, 'stepwise_tool_calls_total', { tool: 'http_fetch', outcome: 'ok' })).toBe(1);
    expect(
      sampleValue(stepwise, 'stepwise_step_attempts_total', {
        kind: 'agent',
        action_type: 'none',
        outcome: 'completed',
      }),
    ).toBe(2);
    expect(sampleValue(stepwise, 'stepwise_run_duration_seconds_count', { kind: 'agent', status: 'completed' })).toBe(
      1,
    );
    // Node's process metrics stay beside them.
    expect(stepwise.some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);

    // The workflow completes after the outcome write the status showed: wait for the SDK to count it.
    let sdk: Sample[] = [];
    await waitFor('the completed workflow in the SDK metrics', async () => {
      sdk = await scrape(`http://127.0.0.1:${sdkPort}/metrics`);
      return sdk.some((x) => x.name === 'temporal_workflow_completed_total');
    });
    const sdkNames = new Set(sdk.map((s) => s.name));
    for (const name of [
      'temporal_worker_task_slots_available',
      'temporal_worker_task_slots_used',
      'temporal_activity_execution_latency_seconds_count',
      'temporal_activity_schedule_to_start_latency_seconds_count',
      'temporal_workflow_task_schedule_to_start_latency_seconds_count',
      'temporal_sticky_cache_size',
      'temporal_workflow_completed_total',
    ]) {
      expect({ name, present: sdkNames.has(name) }).toEqual({ name, present: true });
    }
    expect(
      sampleValue(sdk, 'temporal_activity_execution_latency_seconds_count', {
        activity_type: 'callModel',
        task_queue: api.config.TEMPORAL_TASK_QUEUE,
      }),
    ).toBe(2);

    const apiText = await api.http.get('/metrics');
    const apiSamples = parseProm(apiText.text);
    expect(sampleValue(apiSamples, 'stepwise_runs_started_total', { kind: 'agent' })).toBe(1);
    expect(sampleValue(apiSamples, 'stepwise_idempotent_replays_total')).toBe(1);
    expect(
      sampleValue(apiSamples, 'stepwise_http_requests_total', {
        method: 'POST',
        route: '/api/v1/workflows/:id/run',
        status: '202',
        code: 'none',
      }),
    ).toBe(2);
    expect(sampleValue(apiSamples, 'stepwise_status_reads_total')).toBeGreaterThanOrEqual(1);

    // Every metric the dashboard and the alerts query exists in these scrapes (a renamed metric breaks this test).
    const declared = new Set([
      ...(await declaredNames(healthUrl)),
      ...(await declaredNames(`http://127.0.0.1:${sdkPort}/metrics`)),
      ...parseProm(apiText.text).map((x) => baseName(x.name)),
      ...[...apiText.text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!),
    ]);
    const ops = path.join(repoRoot, 'ops');
    const queried = metricNamesOf(
      fs.readFileSync(path.join(ops, 'grafana', 'dashboards', 'stepwise.json'), 'utf8') +
        fs.readFileSync(path.join(ops, 'prometheus', 'alerts.yml'), 'utf8'),
    );
    expect(queried.length).toBeGreaterThan(20);
    expect(queried.filter((n) => !declared.has(n) && !EMITTED_ON_FIRST_EVENT.has(n))).toEqual([]);

    // No label of any process names the run, the workflow, the user or the key.
    const ids = [runId, workflowId, user.id, user.key];
    for (const s of [...stepwise, ...sdk, ...apiSamples]) {
      for (const value of Object.values(s.labels)) {
        for (const id of ids) expect({ series: s.name, value, id: value.includes(id) }).toMatchObject({ id: false });
      }
    }
    // And every Stepwise series has exactly its documented label names.
    for (const s of [...stepwise, ...apiSamples].filter((x) => x.name.startsWith('stepwise_'))) {
      const names = Object.keys(s.labels)
        .filter((k) => k !== 'le')
        .sort();
      expect({ series: s.name, labels: names }).toEqual({ series: s.name, labels: STEPWISE_LABELS[baseName(s.name)] });
    }
  }, 180_000);
});
