/**
 * A run whose workflow task fails on every attempt (issue 44, item 3): Temporal keeps the execution open and retries
 * the task without end, so the run's projection stays `running` and quiet. The status read reports it as not
 * progressing, with the last failure, as it reports a run no worker serves (R5). Real Temporal, a real Worker running
 * a workflow whose code throws in place of the run workflow, the real API.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { FAILING_TASK_MESSAGE } from '../fixtures/workflows/failing-task';
import { startTestApi, testConfig, testDataConverter, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, startRun, waitForStatus } from '../helpers/workflows';

describe('a run whose workflow task keeps failing', () => {
  let api: TestApi;
  let user: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig({ RUN_STATUS_CHECK_AFTER_SECONDS: '1' }));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is reported stalled, with why the task fails', async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const wf = await createWorkflow(api, user, {
      name: 'failing task',
      steps: [{ id: 'a', template_id: tpl.transform._id, config: { expression: '1' } }],
    });
    const runId = await startRun(api, user, wf);

    const connection = await NativeConnection.connect({ address: api.config.TEMPORAL_ADDRESS });
    const worker = await Worker.create({
      connection,
      taskQueue: api.config.TEMPORAL_TASK_QUEUE,
      workflowsPath: require.resolve('../fixtures/workflows/failing-task'),
      dataConverter: testDataConverter(),
    });
    const running = worker.run();
    try {
      const stalled = await waitForStatus(api, user, runId, (s) => s.progress.stalled, 90_000);
      expect(stalled.status).not.toBe('failed');
      expect(stalled.progress.message).toContain("the run's workflow task fails");
      expect(stalled.progress.message).toContain(FAILING_TASK_MESSAGE);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  }, 120_000);
});
