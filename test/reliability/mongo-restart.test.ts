/**
 * R4: the database server (its own, with a data directory) is stopped and started again on the same port while runs
 * are in flight. The API runs as its real entrypoint in a child process: it answers 503 while the database is down
 * and never exits. Every run completes, and once the database is back the status agrees with Temporal, outputs
 * included.
 */
import { expectEnvelope } from '../helpers/api';
import type { ApiProcess } from '../helpers/api-process';
import type { HttpSink } from '../helpers/http-sink';
import type { Restartable } from '../helpers/own-servers';
import type { TestApi } from '../helpers/stack';
import type { TestUser } from '../helpers/users';
import type { WorkerProcess } from '../helpers/worker-process';
import { createWorkflow, isTerminal, temporalFinalStatus, waitForStatus, type StatusBody } from '../helpers/workflows';
import { waitFor } from '../../devstack/process';
import type { Database } from '../../db/client';
import type { RunResult } from '../../domain/run';
import { OUTAGE_STEPS, outageWorkflowBody } from './outage-workflow';
import { startMongoOutageStack } from './outage-stack';

const REQUEST_DEADLINE_MS = 20_000;
const RUNS = 4;

describe('R4: database stopped and restarted during runs', () => {
  let mongo: Restartable & { uri: string };
  let sink: HttpSink;
  let database: Database;
  let api: TestApi;
  let apiProc: ApiProcess;
  let user: TestUser;
  let worker: WorkerProcess | undefined;
  let stack: Awaited<ReturnType<typeof startMongoOutageStack>>;

  beforeAll(async () => {
    stack = await startMongoOutageStack();
    ({ mongo, sink, api, apiProc, user } = stack);
    database = api.database;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const get = (path: string) => api.http.get(path).set(user.auth).timeout(REQUEST_DEADLINE_MS);
  const start = (wf: string, n: number) =>
    api.http.post(`/api/v1/workflows/${wf}/run`).set(user.auth).timeout(REQUEST_DEADLINE_MS).send({ input: { n } });

  it('every run completes; 503 while the database is down; the API process never exits', async () => {
    worker = stack.spawnWorker();
    await worker.ready;
    const wf = await createWorkflow(api, user, await outageWorkflowBody(database.db, user, sink, 2));
    const runIds: string[] = [];
    for (let n = 0; n < RUNS; n++) {
      const res = await start(wf, n);
      expect(res.status).toBe(202);
      runIds.push(res.body.data.run_id);
    }
    await sink.waitForRequests(RUNS, undefined, 60_000);
    await mongo.stop();

    // Every kind of request is answered, as a 503 in the envelope where it needs the database.
    const during = [
      await start(wf, 100),
      ...(await Promise.all(runIds.map((id) => get(`/api/v1/workflows/runs/${id}/status`)))),
      await get('/api/v1/workflows'),
      await get(`/api/v1/workflows/${wf}/runs`),
    ];
    for (const res of during) {
      expect(res.status).toBe(503);
      expectEnvelope(res, false);
    }
    expect((await api.http.get('/livez').timeout(REQUEST_DEADLINE_MS)).status).toBe(200);
    expect((await api.http.get('/readyz').timeout(REQUEST_DEADLINE_MS)).status).toBe(503);

    expect(apiProc.exitStatus()).toBeNull();

    await mongo.start();
    await waitFor('the API to be ready again', async () => (await api.http.get('/readyz')).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 250,
    });

    const statuses: StatusBody[] = [];
    for (const id of runIds) statuses.push(await waitForStatus(api, user, id, isTerminal, 120_000));
    expect(statuses.map((s) => s.status)).toEqual(runIds.map(() => 'completed'));

    // The status agrees with Temporal: same end state, and the outputs Temporal recorded are the ones shown.
    for (const [i, runId] of runIds.entries()) {
      const handle = api.temporal.workflow.getHandle(runId);
      expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
      const result = (await handle.result()) as RunResult;
      const status = statuses[i]!;
      expect(status.steps.map((s) => s.status)).toEqual(OUTAGE_STEPS.map(() => 'completed'));
      expect(status.outputs).toEqual(result.outputs);
      for (const step of status.steps) expect(step.output).toEqual(result.outputs[step.id]);
    }

    // A run started after the outage is acknowledged and completes too.
    const after = await start(wf, RUNS);
    expect(after.status).toBe(202);
    expect((await waitForStatus(api, user, after.body.data.run_id, isTerminal, 60_000)).status).toBe('completed');
    expect(apiProc.exitStatus()).toBeNull();
  }, 300_000);

  it('a step that completes while the database is down still shows its output afterwards (as in Temporal)', async () => {
    worker ??= stack.spawnWorker();
    await worker.ready;
    const wf = await createWorkflow(api, user, await outageWorkflowBody(database.db, user, sink, 1));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ns = [10, 11];
    for (const n of ns) sink.route(`/first/${n}`, { status: 200, body: { first: n }, until: released });
    const runIds: string[] = [];
    for (const n of ns) {
      const res = await start(wf, n);
      expect(res.status).toBe(202);
      runIds.push(res.body.data.run_id);
    }
    // Both runs are inside their first call; the database goes away; then the calls end.
    await waitFor('both first calls', () => ns.every((n) => sink.requestsTo(`/first/${n}`).length > 0), {
      timeoutMs: 60_000,
    });
    await mongo.stop();
    const warningsBefore = countOf(worker.output(), 'could not record step completion');
    release();
    await waitFor(
      'the worker to report the lost completion writes',
      () => countOf(worker!.output(), 'could not record step completion') >= warningsBefore + ns.length,
      { timeoutMs: 60_000 },
    );
    await mongo.start();

    for (const runId of runIds) {
      const status = await waitForStatus(api, user, runId, isTerminal, 120_000);
      expect(status.status).toBe('completed');
      const result = (await api.temporal.workflow.getHandle(runId).result()) as RunResult;
      expect(status.outputs).toEqual(result.outputs);
      expect(status.outputs.first).toMatchObject({ status: 200 });
    }
    expect(apiProc.exitStatus()).toBeNull();
  }, 300_000);
});

function countOf(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
