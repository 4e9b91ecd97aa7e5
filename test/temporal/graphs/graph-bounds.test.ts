/**
 * Bounds: a map of 1 000 items and a loop of 100 iterations complete inside one run's history (Temporal refuses a
 * history past 51 200 events), and the configured limits are enforced at run time with a clear reason.
 */
import { startGraphStack, type GraphStack } from '../../helpers/graph-stack';
import { uniqueId } from '../../helpers/stack';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

/** Temporal's hard limit on the events of one workflow execution's history. */
const TEMPORAL_HISTORY_EVENT_LIMIT = 51_200;

describe('graph bounds', () => {
  let g: GraphStack;
  beforeAll(async () => {
    g = await startGraphStack({ MAP_MAX_ITEMS: '1000', LOOP_MAX_ITERATIONS: '100' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  const events = async (runId: string) =>
    (await g.api.temporal.workflow.getHandle(runId).fetchHistory()).events?.length ?? 0;

  it('a map of 1 000 items completes, results in order, within the history limit', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('map-1000'),
      steps: [
        {
          id: 'square',
          template_id: g.tpl.transform._id,
          map: { over: '{{input.numbers}}', concurrency: 20 },
          config: { expression: 'n * n', data: { n: '{{map.item}}' } },
        },
      ],
    });
    const numbers = Array.from({ length: 1000 }, (_, i) => i);
    const runId = await startRun(g.api, g.user, wf, { numbers });
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 600_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.square).toEqual(numbers.map((n) => n * n));
    const n = await events(runId);
    expect(n).toBeLessThan(TEMPORAL_HISTORY_EVENT_LIMIT / 4);
    process.stdout.write(`map of 1000 items: ${n} history events\n`);
  }, 660_000);

  it('a loop of 100 iterations completes within the history limit', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('loop-100'),
      steps: [
        {
          id: 'count',
          template_id: g.tpl.transform._id,
          loop: { until: 'steps.count.output >= 100', max_iterations: 100 },
          config: { expression: 'i', data: { i: '{{loop.iteration}}' } },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf);
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 300_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.count).toBe(100);
    const n = await events(runId);
    expect(n).toBeLessThan(TEMPORAL_HISTORY_EVENT_LIMIT / 10);
    process.stdout.write(`loop of 100 iterations: ${n} history events\n`);
  }, 360_000);

  it('a list over MAP_MAX_ITEMS fails the step with map_too_large', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('map-too-large'),
      steps: [
        {
          id: 'each',
          template_id: g.tpl.transform._id,
          map: { over: '{{input.items}}' },
          config: { expression: '1' },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf, { items: Array.from({ length: 1001 }, () => 0) });
    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'each', reason: 'map_too_large' });
    expect(status.error!.message).toContain('MAP_MAX_ITEMS');
  });
});
