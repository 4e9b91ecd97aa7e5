/**
 * METRICS_ROUND_TRIPS=true: the API process counts its MongoDB commands and Temporal calls, the worker process its
 * MongoDB commands, on their /metrics (what the benchmark's counted rows C1 and C2 read). One run of one
 * `http_request` step through the real entrypoints: the start is exactly one StartWorkflowExecution and some
 * commands on `runs`; the worker wrote the run's progress to `runs`; no label holds an id.
 */
import request from 'supertest';
import { freePort, waitFor } from '../../devstack/process';
import type { Database } from '../../db/client';
import { spawnApi, type ApiProcess } from '../helpers/api-process';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { parseProm, scrape, type Sample } from '../helpers/prom-text';
import { openTestDb, testConfig } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

/** Sum of a metric's samples whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

describe('round-trip metrics (METRICS_ROUND_TRIPS)', () => {
  let sink: HttpSink;
  let database: Database;
  let user: TestUser;
  let api: ApiProcess | undefined;
  let worker: WorkerProcess | undefined;
  let healthPort: number;

  beforeAll(async () => {
    sink = await startHttpSink({ '/hit': { status: 200, body: { ok: true } } });
    const extra = { METRICS_ROUND_TRIPS: 'true', HTTP_ALLOWED_HOSTS: sink.host };
    const config = testConfig(extra);
    database = await openTestDb(config);
    user = await createTestUser(database.db);
    healthPort = await freePort();
    api = await spawnApi(config, extra);
    worker = spawnWorker(config, { ...extra, WORKER_HEALTH_PORT: String(healthPort) });
    await Promise.all([api.ready, worker.ready]);
  }, 90_000);
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await worker?.exited;
    await api?.kill();
    await database?.db.dropDatabase();
    await database?.close();
    await sink?.close();
  });

  it('counts the API’s commands and Temporal calls of a run start, and the worker’s commands of its step', async () => {
    const http = request(api!.url);
    const templates = await http.get('/api/v1/agents?step_type=action&limit=200').set(user.auth);
    const httpTemplate = (templates.body as { data: { id: string; action_type: string | null }[] }).data.find(
      (t) => t.action_type === 'http_request',
    );
    const created = await http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: 'round trips',
        steps: [{ id: 'hit', template_id: httpTemplate!.id, config: { url: sink.url('/hit') } }],
      });
    expect(created.status).toBe(201);
    const workflowId = (created.body as { data: { id: string } }).data.id;

    const metricsOf = async () => parseProm((await http.get('/metrics')).text);
    const before = await metricsOf();
    const started = await http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({ input: {} });
    expect(started.status).toBe(202);
    const runId = (started.body as { data: { run_id: string } }).data.run_id;
    const after = await metricsOf();

    const delta = (name: string, labels: Record<string, string> = {}) =>
      total(after, name, labels) - total(before, name, labels);
    expect(delta('stepwise_temporal_calls_total', { method: 'StartWorkflowExecution' })).toBe(1);
    expect(delta('stepwise_db_commands_total', { collection: 'runs' })).toBeGreaterThan(0);

    await waitFor(
      'the run to complete',
      async () => {
        const res = await http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth);
        return (res.body as { data: { status: string } }).data.status === 'completed';
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(sink.requestsTo('/hit')).toHaveLength(1);
    const workerSamples = await scrape(`http://127.0.0.1:${healthPort}/metrics`);
    expect(total(workerSamples, 'stepwise_db_commands_total', { collection: 'runs' })).toBeGreaterThan(0);

    // Labels are command, collection and method names only: never the run, workflow, user or key.
    const ids = [runId, workflowId, user.id, user.key];
    for (const s of [...after, ...workerSamples].filter((x) =>
      /^stepwise_(db_commands|temporal_calls)_total$/.test(x.name),
    )) {
      expect(Object.keys(s.labels).sort()).toEqual(
        s.name === 'stepwise_db_commands_total' ? ['collection', 'command'] : ['method'],
      );
      for (const value of Object.values(s.labels)) expect(ids.some((id) => value.includes(id))).toBe(false);
    }
  }, 120_000);
});
