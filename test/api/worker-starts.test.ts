/**
 * Run starts handed to the worker (WORKER_START_URL; api/commands/worker-starts.ts, temporal/run-starts.ts), against
 * the real Temporal test server, database and worker: the worker makes the start on its own connection and Temporal
 * gives it the first workflow task back (eager workflow start); the worker starts nothing but a recorded run waiting to
 * start; and with no worker at the URL the API starts runs itself.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { runsCollection } from '../../db/runs';
import { freePort } from '../../devstack/process';
import { createWorkerMetrics } from '../../runtime/metrics/worker-metrics';
import { createWorkerHealthServer } from '../../temporal/health-server';
import { createRunStarter } from '../../temporal/run-starts';
import type { Database } from '../../db/client';
import {
  openTestDb,
  silentLogger,
  startTestApi,
  startTestWorker,
  testConfig,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

let api: TestApi;
let workerDb: Database;
let worker: TestWorker;
let health: Server;
let workerUrl: string;
let user: TestUser;
const registry = new Registry();

beforeAll(async () => {
  // The worker's side as temporal/worker.ts wires it: its health server takes the starts, on the worker's connection.
  const base = testConfig();
  workerDb = await openTestDb(base);
  worker = await startTestWorker(base, workerDb);
  const startRun = createRunStarter({
    config: base,
    db: workerDb.db,
    logger: silentLogger,
    connection: worker.connection,
    metrics: createWorkerMetrics(registry),
  });
  health = createWorkerHealthServer({ state: () => worker.worker.getState(), metrics: registry, startRun });
  await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
  workerUrl = `http://127.0.0.1:${(health.address() as AddressInfo).port}`;
  api = await startTestApi({ ...base, WORKER_START_URL: workerUrl });
  user = await createTestUser(api.database.db);
});
afterAll(async () => {
  await new Promise((resolve) => health?.close(resolve));
  await worker?.stop();
  await api?.close();
  await workerDb?.close();
});

async function startsTaken(eager: boolean): Promise<number> {
  const text = await registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`stepwise_run_starts_taken_total{eager="${eager}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function transformWorkflow(): Promise<string> {
  const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
  return createWorkflow(api, user, {
    name: 'handed over',
    steps: [{ id: 's1', template_id: t._id, config: { expression: 'data', data: '{{input}}' } }],
  });
}

describe('a run start handed to the worker', () => {
  it('is made by the worker, eagerly, and the run goes to its end with its Temporal run id recorded', async () => {
    const workflowId = await transformWorkflow();
    const before = await startsTaken(true);
    // The API's first start waits for Temporal (it has not answered yet), the next ones are made behind the answer:
    // both go through the worker.
    const runIds = [await startRun(api, user, workflowId, { n: 1 }), await startRun(api, user, workflowId, { n: 2 })];
    for (const runId of runIds) {
      const status = await waitForStatus(api, user, runId, isTerminal);
      expect(status.status).toBe('completed');
      const run = await runsCollection(api.database.db).findOne({ _id: runId });
      const described = await api.temporal.workflow.getHandle(runId).describe();
      expect(run?.temporal.run_id).toBe(described.runId);
    }
    expect(await startsTaken(true)).toBe(before + 2);
  });

  it('starts only a recorded run that waits to start', async () => {
    const post = (path: string, method = 'POST') => fetch(`${workerUrl}${path}`, { method });
    const unknown = await post('/runs/run_doesnotexist0000/start');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ data: null, error: 'no such run' });
    expect((await post('/runs/not-a-run-id/start')).status).toBe(404);
    expect((await post('/runs/%E0%A4%A/start')).status).toBe(404);

    const done = await startRun(api, user, await transformWorkflow());
    await waitForStatus(api, user, done, isTerminal);
    const again = await post(`/runs/${done}/start`);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ data: null, error: 'the run is not waiting to start' });
    expect((await post(`/runs/${done}/start`, 'GET')).status).toBe(405);
  });
});

describe('with no worker at WORKER_START_URL', () => {
  it('the API starts runs itself, and they run', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const alone = await startTestApi({ ...api.config, WORKER_START_URL: nobody });
    try {
      const taken = (await startsTaken(true)) + (await startsTaken(false));
      const workflowId = await transformWorkflow();
      const runIds = [await startRun(alone, user, workflowId), await startRun(alone, user, workflowId)];
      for (const runId of runIds) {
        expect((await waitForStatus(alone, user, runId, isTerminal)).status).toBe('completed');
      }
      expect((await startsTaken(true)) + (await startsTaken(false))).toBe(taken);
    } finally {
      await alone.close();
    }
  });
});
