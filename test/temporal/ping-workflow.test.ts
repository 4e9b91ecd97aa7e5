import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';

describe('a workflow on the real Temporal server through the real worker', () => {
  let api: TestApi;
  let worker: TestWorker;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('runs pingWorkflow and returns the activity result', async () => {
    const message = uniqueId('hello-');
    const result = await api.temporal.workflow.execute('pingWorkflow', {
      taskQueue: api.config.TEMPORAL_TASK_QUEUE,
      workflowId: uniqueId('ping-'),
      args: [message],
    });
    expect(result).toBe(`echo: ${message}`);
  });
});
