/**
 * A status wait's watch for the run's close (api/commands/run-status/long-poll.ts), against the real Temporal test
 * server: a run acknowledged before Temporal had it (api/commands/execution-starts.ts) may not exist yet when a client
 * asks for its status right after the 202, and the watch must still see it close.
 */
import { CloseWatches } from '../../api/commands/run-status/long-poll';
import { RUN_WORKFLOW_TYPE } from '../../temporal/contract/task-queue';
import { startTestApi, uniqueId, type TestApi } from '../helpers/stack';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

it('a watch opened before Temporal has the run sees it close once it exists', async () => {
  const runId = uniqueId('run_watch_');
  const stop = new AbortController();
  const closed = new CloseWatches(api.temporal).closeOf(runId, stop.signal);
  expect(closed).toBeDefined();
  let seen = false;
  void closed!.then(() => (seen = true));
  await new Promise((resolve) => setTimeout(resolve, 100)); // the watch has found no execution yet
  const handle = await api.temporal.workflow.start(RUN_WORKFLOW_TYPE, {
    workflowId: runId,
    taskQueue: 'close-watch-no-worker',
    args: [{}],
  });
  expect(seen).toBe(false);
  await handle.terminate('closing it');
  await closed;
  expect(seen).toBe(true);
  stop.abort();
});
