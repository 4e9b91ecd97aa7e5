/**
 * R4 (slow variant, `npm run test:chaos`): the database is stopped and restarted three times while runs are in
 * flight, each outage swallowing the end of a step. The API child process answers 503 throughout and never exits;
 * every run completes, and its status (outputs included) equals Temporal's result.
 */
import type { ApiProcess } from '../helpers/api-process';
import type { HttpSink } from '../helpers/http-sink';
import type { Restartable } from '../helpers/own-servers';
import type { TestApi } from '../helpers/stack';
import type { TestUser } from '../helpers/users';
import type { WorkerProcess } from '../helpers/worker-process';
import { createWorkflow, isTerminal, waitForStatus } from '../helpers/workflows';
import { waitFor } from '../../devstack/process';
import type { Database } from '../../db/client';
import type { RunResult } from '../../domain/run';
import { outageWorkflowBody } from './outage-workflow';
import { startMongoOutageStack } from './outage-stack';

const OUTAGES = 3;
const RUNS_PER_ROUND = 3;

describe('R4 chaos: repeated database outages', () => {
  let mongo: Restartable & { uri: string };
  let sink: HttpSink;
  let database: Database;
  let api: TestApi;
  let apiProc: ApiProcess;
  let user: TestUser;
  let worker: WorkerProcess | undefined;
  let stack: Awaited<ReturnType<typeof startMongoOutageStack>>;

  beforeAll(async () => {
    stack = await startMongoOutageStack({ RATE_LIMIT_RUNS_PER_MINUTE: '1000' });
    ({ mongo, sink, api, apiProc, user } = stack);
    database = api.database;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('every run completes across three outages and agrees with Temporal', async () => {
    worker = stack.spawnWorker();
    await worker.ready;
    const wf = await createWorkflow(api, user, await outageWorkflowBody(database.db, user, sink, 1));
    const runIds: string[] = [];

    for (let round = 0; round < OUTAGES; round++) {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      const ns = Array.from({ length: RUNS_PER_ROUND }, (_, i) => runIds.length + i);
      for (const n of ns) sink.route(`/first/${n}`, { status: 200, body: { first: n }, until: released });
      for (const n of ns) {
        const res = await api.http
          .post(`/api/v1/workflows/${wf}/run`)
          .set(user.auth)
          .timeout(20_000)
          .send({ input: { n } });
        expect(res.status).toBe(202);
        runIds.push(res.body.data.run_id);
      }
      await waitFor('the round to be inside its first calls', () =>
        ns.every((n) => sink.requestsTo(`/first/${n}`).length > 0),
      );

      await mongo.stop();
      release();
      for (const id of runIds) {
        const res = await api.http.get(`/api/v1/workflows/runs/${id}/status`).set(user.auth).timeout(20_000);
        expect(res.status).toBe(503);
      }
      expect(apiProc.exitStatus()).toBeNull();
      await mongo.start();
      await waitFor('the API to be ready again', async () => (await api.http.get('/readyz')).status === 200, {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
    }

    for (const runId of runIds) {
      const status = await waitForStatus(api, user, runId, isTerminal, 180_000);
      expect(status.status).toBe('completed');
      const result = (await api.temporal.workflow.getHandle(runId).result()) as RunResult;
      expect(status.outputs).toEqual(result.outputs);
    }
    expect(apiProc.exitStatus()).toBeNull();
  }, 600_000);
});
