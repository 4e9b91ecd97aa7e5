import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { createWorkerHealthServer } from '../../temporal/health-server';
import { WorkflowNotFoundError } from '@temporalio/client';
import { runsCollection } from '../../db/runs';
import { newId } from '../../db/ids';
import { freePort, isPortOpen, waitFor } from '../../devstack/process';
import { actionStep, insertTestRun } from '../helpers/snapshots';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

describe("the worker's health server, on a real worker", () => {
  let api: TestApi;
  let worker: TestWorker;
  let server: http.Server;
  let base: string;
  let workerStopped = false;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
    const metrics = new Registry();
    collectDefaultMetrics({ register: metrics });
    server = createWorkerHealthServer({ state: () => worker.worker.getState(), metrics });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    // TestWorker.stop closes its connection: only once.
    if (!workerStopped) await worker?.stop();
    await api?.close();
  });

  const get = async (p: string, method = 'GET') => {
    const res = await fetch(`${base}${p}`, { method });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('is live and ready while the worker polls, serves Prometheus metrics, and answers unknown paths with 404', async () => {
    expect(await get('/livez')).toMatchObject({
      status: 200,
      text: JSON.stringify({ data: { state: 'RUNNING' }, error: null }),
    });
    expect(await get('/readyz')).toMatchObject({ status: 200 });
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.text).toContain('process_cpu_user_seconds_total');
    const missing = await get('/nope');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({ data: null, error: 'no route for GET /nope' });
    expect((await get('/readyz', 'POST')).status).toBe(405);
  });

  it('stops being ready once the worker has shut down', async () => {
    await worker.stop();
    workerStopped = true;
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({ data: null, error: `worker state ${worker.worker.getState()}` });
    // Shut down cleanly is not failed: still live.
    expect((await get('/livez')).status).toBe(200);
  });
});

describe('the worker process as deployed (temporal/main.ts with WORKER_HEALTH_PORT)', () => {
  let api: TestApi;
  let worker: WorkerProcess | undefined;
  let base: string;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    const port = await freePort();
    worker = spawnWorker(api.config, { WORKER_HEALTH_PORT: String(port) });
    await worker.ready;
    // The log line may come before the health server has bound its port.
    await waitFor('the worker health port', () => isPortOpen(port), { timeoutMs: 10_000 });
    base = `http://127.0.0.1:${port}`;
  }, 120_000);
  afterAll(async () => {
    if (worker) {
      worker.kill('SIGTERM');
      await worker.exited;
    }
    await api?.close();
  });

  it('starts no run: a recorded run (as one the API is refusing) stays out of Temporal', async () => {
    // Issue #33 item 8: the API records a run before it knows whether to start it, and removes the record again when
    // it refuses; the worker's port is unauthenticated, so no route there may start what the record names.
    const runId = await insertTestRun(api.database.db, newId('run'), [actionStep('s1')]);
    const res = await fetch(`${base}/runs/${runId}/start`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ data: null, error: 'method POST not allowed' });
    await expect(api.temporal.workflow.getHandle(runId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect((await runsCollection(api.database.db).findOne({ _id: runId }))?.temporal.run_id).toBeNull();
  });
});
