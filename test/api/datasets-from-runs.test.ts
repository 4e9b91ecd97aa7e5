/**
 * Items from recorded runs on the real stack: runs of a tiny workflow run end to end on a real worker, then become
 * items by id and by a run search ("the last N completed runs of workflow X") — each keeping the run's input, its
 * outputs as `expected` and its id as `source_run_id`. Unknown and other users' runs are 404s naming them, a run
 * that has not ended is a 409 naming it, and an input the dataset's workflow schema refuses names the run.
 */
import type { Response } from 'supertest';
import { expectError } from '../helpers/api';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import type { JsonObject } from '../../domain/json';

interface Item {
  id: string;
  input: Record<string, unknown>;
  expected: unknown;
  metadata: Record<string, unknown>;
  source_run_id: string | null;
}
interface Change {
  version: number;
  item_count: number;
  added: number;
  items: Item[];
}

describe('dataset items from runs', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let other: TestUser;
  let transform: TemplateDoc;
  let approval: TemplateDoc;
  const oas = openApiChecker();

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    other = await createTestUser(api.database.db);
    const tpl = await actionTemplates(api.database.db, user.id);
    transform = tpl.transform;
    approval = tpl.approval;
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  const post = async (path: string, body: object, who: TestUser = user): Promise<Response> => {
    const res = await api.http.post(`/api/v1${path}`).set(who.auth).send(body);
    oas.check(res);
    return res;
  };
  const data = <T>(res: Response, status: number): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };
  const dataset = async (body: object = {}) =>
    data<{ id: string }>(await post('/datasets', { name: uniqueId('runs-'), ...body }), 201).id;
  /** A workflow doubling `input.n`, in one transform step `double`. */
  const doubler = (schema?: JsonObject) =>
    createWorkflow(api, user, {
      name: uniqueId('double'),
      ...(schema ? { config: { input_schema: schema } } : {}),
      steps: [{ id: 'double', template_id: transform._id, config: { expression: '$ * 2', data: '{{input.n}}' } }],
    });
  /** Runs the workflow to its end with `input`; returns the run id. */
  const runToEnd = async (workflowId: string, input: JsonObject) => {
    const runId = await startRun(api, user, workflowId, input);
    const end = await waitForStatus(api, user, runId, isTerminal);
    if (end.status !== 'completed') throw new Error(`run ${runId} ended ${JSON.stringify(end)}`);
    return runId;
  };

  it('takes the last N completed runs of a workflow: input, outputs as expected, source_run_id', async () => {
    const x = await doubler();
    const y = await doubler();
    const runs: string[] = [];
    for (const n of [1, 2, 3]) runs.push(await runToEnd(x, { n }));
    await runToEnd(y, { n: 100 });

    const id = await dataset();
    const change = data<Change>(
      await post(`/datasets/${id}/items/from-runs`, { search: { workflow_id: x, status: ['completed'], limit: 2 } }),
      201,
    );
    expect(change).toMatchObject({ version: 1, item_count: 2, added: 2 });
    // Newest first, as the run search lists them.
    expect(change.items.map((i) => [i.source_run_id, i.input, i.expected])).toEqual([
      [runs[2], { n: 3 }, { double: 6 }],
      [runs[1], { n: 2 }, { double: 4 }],
    ]);
    expect(change.items[0]!.metadata).toEqual({ workflow_id: x, run_status: 'completed' });

    // By id, in the order given; a repeated id counts once.
    const byId = data<Change>(
      await post(`/datasets/${id}/items/from-runs`, { run_ids: [runs[0], runs[2], runs[0]] }),
      201,
    );
    expect(byId).toMatchObject({ version: 2, item_count: 4, added: 2 });
    expect(byId.items.map((i) => [i.source_run_id, i.expected])).toEqual([
      [runs[0], { double: 2 }],
      [runs[2], { double: 6 }],
    ]);

    // The export keeps what a replay needs: the run's id beside its input and outputs.
    const exported = await api.http.get(`/api/v1/datasets/${id}/items/export`).set(user.auth);
    expect(exported.text.trimEnd().split('\n')[0]).toBe(
      JSON.stringify({
        input: { n: 3 },
        expected: { double: 6 },
        metadata: { workflow_id: x, run_status: 'completed' },
        source_run_id: runs[2],
      }),
    );
  }, 120_000);

  it("refuses unknown runs, other users' runs and runs that have not ended, naming them; writes nothing", async () => {
    const x = await doubler();
    const done = await runToEnd(x, { n: 5 });
    const gated = await createWorkflow(api, user, {
      name: uniqueId('gated'),
      steps: [{ id: 'gate', template_id: approval._id, config: { message: 'Go?' } }],
    });
    const waiting = await startRun(api, user, gated);
    await waitForStatus(api, user, waiting, (s) => s.status === 'waiting');
    const id = await dataset();

    expectError(
      await post(`/datasets/${id}/items/from-runs`, { run_ids: [done, 'run_nosuchrun000'] }),
      404,
      'run_nosuchrun000',
    );
    // Another user's run is unknown to this user, and this user's run to the other.
    const theirs = await dataset();
    expectError(await post(`/datasets/${theirs}/items/from-runs`, { run_ids: [done] }, other), 404, theirs);
    const otherSet = data<{ id: string }>(await post('/datasets', { name: uniqueId('o-') }, other), 201).id;
    expectError(await post(`/datasets/${otherSet}/items/from-runs`, { run_ids: [done] }, other), 404, done);

    expectError(
      await post(`/datasets/${id}/items/from-runs`, { run_ids: [done, waiting] }),
      409,
      waiting,
      'has not ended',
    );
    // A search only ever finds ended runs: a status in flight is not a choice.
    expectError(
      await post(`/datasets/${id}/items/from-runs`, { search: { status: ['running'] } }),
      400,
      'search.status',
    );
    expectError(await post(`/datasets/${id}/items/from-runs`, { search: { workflow_id: gated } }), 404, 'no ended run');
    expectError(await post(`/datasets/${id}/items/from-runs`, { run_ids: [done], search: {} }), 400, 'exactly one');
    const after = await api.http.get(`/api/v1/datasets/${id}`).set(user.auth);
    expect((after.body as { data: { version: number; item_count: number } }).data).toMatchObject({
      version: 0,
      item_count: 0,
    });
    await api.http.post(`/api/v1/workflows/runs/${waiting}/cancel`).set(user.auth);
  }, 120_000);

  it("refuses a run whose input the dataset's workflow schema refuses, naming the run and the message", async () => {
    const loose = await doubler();
    const strict = await doubler({ type: 'object', required: ['n', 'label'] });
    const run = await runToEnd(loose, { n: 7 });
    const id = await dataset({ workflow_id: strict });
    expectError(
      await post(`/datasets/${id}/items/from-runs`, { run_ids: [run] }),
      400,
      `run ${run}`,
      strict,
      'input.label: required',
    );
  }, 120_000);
});
