/**
 * R4, the long-outage case: when MongoDB stays down longer than the workflow retries its projection writes, a
 * completed step's output never reaches the projection. The run still ends `completed` (its outcome is written when
 * the database is back), so nothing would ever fix the step. The status read answers the outputs from Temporal's
 * result without writing them; the worker's reconciler (temporal/reconciler.ts) writes them back. The lost writes
 * are reproduced here by clearing the outputs in the projection of a finished run (waiting out a real outage of
 * several minutes is too slow for the suite).
 */
import { runsCollection } from '../../db/runs';
import { Reconciler } from '../../temporal/reconciler';
import {
  silentLogger,
  startTestApi,
  startTestWorker,
  testConfig,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { RunResult } from '../../domain/run';

describe('R4: outputs lost by a long database outage', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('the status shows the outputs Temporal recorded; the reconciler writes them back', async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const wf = await createWorkflow(api, user, {
      name: 'lost writes',
      steps: [
        { id: 'a', template_id: tpl.transform._id, config: { expression: '{"x": 1}' } },
        { id: 'b', template_id: tpl.transform._id, config: { expression: 'x + 1', data: '{{steps.a.output}}' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    expect((await waitForStatus(api, user, runId, isTerminal)).status).toBe('completed');
    const result = (await api.temporal.workflow.getHandle(runId).result()) as RunResult;

    // What a database outage longer than the projection retries leaves behind: steps completed, outputs missing.
    await api.database.db
      .collection('runs')
      .updateOne({ _id: runId as never }, { $set: { 'steps.$[].output_json': null } });

    const res = await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.outputs).toEqual({ a: { x: 1 }, b: 2 });
    expect(res.body.data.outputs).toEqual(result.outputs);
    const outputsOf = async () =>
      (await runsCollection(api.database.db).findOne({ _id: runId }))?.steps.map((s) => s.output_json);
    // The read wrote nothing; the reconciler's pass writes them back, so later reads need no Temporal call.
    expect(await outputsOf()).toEqual([null, null]);
    const reconciler = new Reconciler({
      db: api.database.db,
      temporal: api.temporal,
      logger: silentLogger,
      quietMs: 1_000,
    });
    expect((await reconciler.pass()).outputs_restored).toEqual([runId]);
    expect(await outputsOf()).toEqual(['{"x":1}', '2']);
  });
});
