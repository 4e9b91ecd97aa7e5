/**
 * A status wait also holds Temporal's long poll for the run's close (api/commands/run-status/long-poll.ts): it fires
 * when the execution closes, whatever way, and not for an execution that is unknown; the number held is bounded.
 */
import { CloseWatches } from '../../api/commands/run-status/long-poll';
import { startTestApi, uniqueId, type TestApi } from '../helpers/stack';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const settled = (p: Promise<void> | undefined, ms: number) =>
  Promise.race([p!.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), ms))]);

describe('close watches', () => {
  it('fire when the execution closes (here: terminated), and hold nothing once aborted', async () => {
    const watches = new CloseWatches(api.temporal, 1);
    const id = uniqueId('run_');
    // Any execution will do: one that nobody works on, on a queue without workers.
    const handle = await api.temporal.workflow.start('runWorkflow', {
      taskQueue: uniqueId('idle-'),
      workflowId: id,
      args: [],
    });
    const stop = new AbortController();
    const closed = watches.closeOf(id, stop.signal);
    expect(watches.closeOf(id, stop.signal)).toBeUndefined(); // the bound
    expect(await settled(closed, 300)).toBe('open');
    await handle.terminate('test');
    expect(await settled(closed, 10_000)).toBe('closed');
    stop.abort();
    // The slot is free again; an unknown execution never counts as closed.
    const other = new AbortController();
    const unknown = watches.closeOf(uniqueId('run_'), other.signal);
    expect(unknown).toBeDefined();
    expect(await settled(unknown, 500)).toBe('open');
    other.abort();
  });
});
