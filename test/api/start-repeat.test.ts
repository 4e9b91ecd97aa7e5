/**
 * A repeated start (same Idempotency-Key) never waits for the first request: when the first is held between its
 * record and Temporal's start (a slow or stopped API process), the repeat starts the run itself and answers 202 at
 * once, and the run is one execution on the real Temporal server and worker (shared/runs/create-run.ts).
 */
import type { Client } from '@temporalio/client';
import { startRun } from '../../api/commands/start-run';
import { createInputValidators } from '../../api/commands/input-validators';
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, temporalFinalStatus, waitForStatus } from '../helpers/workflows';

describe('a repeated start while the first is held before Temporal', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    api = await startTestApi();
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('starts the recorded run itself and answers 202 with its id; one execution, completed', async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const wf = await createWorkflow(api, user, {
      name: 'repeat',
      steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression: 'n * 2', data: '{{input}}' } }],
    });
    // The first request as an API process would make it whose Temporal call never returns.
    let reachedTemporal!: () => void;
    const held = new Promise<void>((resolve) => (reachedTemporal = resolve));
    const stuck = {
      connection: {
        withDeadline: () => {
          reachedTemporal();
          return new Promise(() => undefined);
        },
      },
    } as unknown as Client;
    void startRun(
      { config: api.config, db: api.database.db, temporal: stuck, inputValidators: createInputValidators() },
      { ownerId: user.id, workflowId: wf, input: { n: 21 }, idempotencyKey: 'held', baseUrl: 'http://x' },
    );
    await held;

    const repeat = await api.http
      .post(`/api/v1/workflows/${wf}/run`)
      .set(user.auth)
      .set('Idempotency-Key', 'held')
      .send({ input: { n: 21 } });
    expect(repeat.status).toBe(202);
    const runId = repeat.body.data.run_id as string;
    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(1);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done).toMatchObject({ status: 'completed', outputs: { calc: 42 } });
    expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
  });
});
