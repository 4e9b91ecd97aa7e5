/**
 * R6: the same Idempotency-Key sent 50 times at once starts exactly one run (counted in MongoDB and in Temporal);
 * the same key with a different body is refused with 422, also when both bodies race each other.
 */
import type { Response } from 'supertest';
import { expectEnvelope } from '../helpers/api';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, temporalFinalStatus, waitForStatus } from '../helpers/workflows';
import { waitFor } from '../../devstack/process';

const CONCURRENT = 50;

describe('R6: concurrent duplicates of one Idempotency-Key', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let wf: string;

  beforeAll(async () => {
    api = await startTestApi(
      testConfig({
        RATE_LIMIT_RUNS_PER_MINUTE: '10000',
        RATE_LIMIT_PER_MINUTE: '10000',
        RATE_LIMIT_IP_PER_MINUTE: '10000',
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    const tpl = await actionTemplates(api.database.db, user.id);
    wf = await createWorkflow(api, user, {
      name: 'idempotent',
      steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression: 'n * 2', data: '{{input}}' } }],
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  const send = (key: string, input: Record<string, unknown>) =>
    api.http.post(`/api/v1/workflows/${wf}/run`).set(user.auth).set('Idempotency-Key', key).send({ input });

  it('an empty or blank Idempotency-Key is refused, not read as no key', async () => {
    for (const key of ['', '   ']) {
      const res = await send(key, { n: 1 });
      expect(res.status).toBe(400);
      expectEnvelope(res, false);
      expect(res.body.error).toContain('Idempotency-Key');
    }
  });

  /** Executions Temporal holds for this key's run ids, by workflow id (visibility catches up; describe does not lag). */
  async function temporalExecutions(): Promise<string[]> {
    const ids: string[] = [];
    for await (const e of api.temporal.workflow.list({ query: `StepwiseWorkflowId = "${wf}"` })) ids.push(e.workflowId);
    return ids;
  }

  function expectOnlyAcceptedOrInFlight(responses: Response[], alsoAllowed: number[] = []): Set<string> {
    for (const res of responses) {
      expect([202, 409, ...alsoAllowed]).toContain(res.status);
      expectEnvelope(res, res.status === 202);
    }
    return new Set(responses.filter((r) => r.status === 202).map((r) => r.body.data.run_id as string));
  }

  it(`${CONCURRENT} concurrent identical starts → exactly one run in MongoDB and in Temporal; another body → 422`, async () => {
    const responses = await Promise.all(Array.from({ length: CONCURRENT }, () => send('fifty', { n: 21 })));
    const runIds = expectOnlyAcceptedOrInFlight(responses);
    expect(runIds.size).toBe(1);
    const [runId] = [...runIds] as [string];

    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(1);
    expect(await api.database.db.collection('idempotency_keys').countDocuments({ run_id: runId })).toBe(1);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.outputs.calc).toBe(42);

    // Temporal: the run id is one execution, and the workflow's search attribute finds exactly that one.
    expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
    let executions: string[] = [];
    await waitFor('visibility to list the run', async () => (executions = await temporalExecutions()).length >= 1, {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    expect(executions).toEqual([runId]);

    // Later duplicates answer the same run; a different body with the key is refused.
    const again = await send('fifty', { n: 21 });
    expect(again.status).toBe(202);
    expect(again.body.data.run_id).toBe(runId);
    const other = await send('fifty', { n: 22 });
    expect(other.status).toBe(422);
    expectEnvelope(other, false);
    expect(other.headers['x-error-code']).toBe('idempotency_mismatch');
  });

  it('two bodies racing for one key: one run, the other body gets 422 (or 409 while the first is starting)', async () => {
    const before = await api.database.db.collection('runs').countDocuments({ workflow_id: wf });
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => send('race', { n: i % 2 === 0 ? 1 : 2 })),
    );
    const runIds = expectOnlyAcceptedOrInFlight(responses, [422]);
    expect(runIds.size).toBe(1);
    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(before + 1);
    // Every 202 answered the winning body, every 422 the other one.
    const [runId] = [...runIds] as [string];
    const run = await api.database.db.collection('runs').findOne({ _id: runId as never });
    const winner = (run?.snapshot as { input: { n: number } }).input.n;
    responses.forEach((res, i) => {
      const n = i % 2 === 0 ? 1 : 2;
      if (res.status === 202) expect(n).toBe(winner);
      if (res.status === 422) expect(n).not.toBe(winner);
    });
  });
});
