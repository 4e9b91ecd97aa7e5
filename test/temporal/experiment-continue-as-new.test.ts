/**
 * An experiment over a dataset larger than one execution's window (EXPERIMENT_UNITS_PER_EXECUTION lowered to 3):
 * the parent workflow continues as new, carrying the next unit's number and the spend, and the experiment still
 * finishes with every item × repetition run exactly once and scored. The window splits an item's repetitions across
 * two executions (3 units of 2 repetitions each), so the window arithmetic is exercised, not only whole items.
 */
import { temporal } from '@temporalio/proto';
import { runsCollection } from '../../db/runs';
import { planWindow } from '../../domain/experiment';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow } from '../helpers/workflows';

const { EventType } = temporal.api.enums.v1;

describe('planWindow', () => {
  it('names the items a window of units touches', () => {
    expect(planWindow(0, 3, 2, 5)).toEqual({ first: 0, count: 2 }); // units 0–2: items 0, 1
    expect(planWindow(3, 3, 2, 5)).toEqual({ first: 1, count: 2 }); // units 3–5: items 1, 2
    expect(planWindow(9, 3, 2, 5)).toEqual({ first: 4, count: 1 }); // unit 9 only: item 4
    expect(planWindow(0, 500, 1, 3)).toEqual({ first: 0, count: 3 });
  });
});

describe('an experiment larger than one execution', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack({ EXPERIMENT_UNITS_PER_EXECUTION: '3' });
  }, 60_000);
  afterAll(() => g?.stop());

  const post = async (url: string, body: object) => {
    const res = await g.api.http.post(`/api/v1${url}`).set(g.user.auth).send(body);
    if (res.status !== 201) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: { id: string } }).data.id;
  };

  it('continues as new and still runs every item × repetition once', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('add'),
      steps: [
        { id: 'add', template_id: g.tpl.transform._id, config: { expression: '{"sum": a + b}', data: '{{input}}' } },
      ],
    });
    const ds = await post('/datasets', { name: uniqueId('set-') });
    const pairs = [1, 2, 3, 4, 5].map((a) => ({ a, b: 10 * a }));
    await post(`/datasets/${ds}/items`, {
      items: pairs.map((p) => ({ input: p, expected: { add: { sum: p.a + p.b } } })),
    });
    const exp = await post('/experiments', {
      dataset_id: ds,
      workflow_id: wf,
      scorers: [{ kind: 'exact', path: 'add.sum' }],
      repetitions: 2,
      concurrency: 2,
    });

    const handle = g.api.temporal.workflow.getHandle(exp);
    // result() follows the chain of executions to the last one's result.
    await expect(handle.result()).resolves.toMatchObject({ status: 'completed' });

    // The chain: 10 units, 3 an execution → 4 executions, each but the last ending in continue-as-new.
    const { raw } = await handle.describe();
    const executions: boolean[] = [];
    let runId: string | undefined = raw.workflowExecutionInfo?.firstRunId ?? undefined;
    while (runId) {
      const history = await g.api.temporal.workflow.getHandle(exp, runId).fetchHistory();
      const events = history.events ?? [];
      const last = events[events.length - 1];
      const continued = last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW;
      executions.push(continued);
      runId = continued
        ? (last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
    }
    expect(executions).toEqual([true, true, true, false]);

    const res = await g.api.http.get(`/api/v1/experiments/${exp}`).set(g.user.auth);
    const detail = (res.body as { data: { status: string; progress: object; summary: object[] } }).data;
    expect(detail).toMatchObject({ status: 'completed', progress: { done: 10, total: 10 } });
    expect(detail.summary).toEqual([expect.objectContaining({ name: 'exact', mean: 1, n: 10 })]);

    const runs = await runsCollection(g.api.database.db).find({ experiment_id: exp }).toArray();
    expect(runs).toHaveLength(10);
    expect(new Set(runs.map((r) => r._id)).size).toBe(10);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    const inputs = runs.map((r) => JSON.stringify(r.input)).sort();
    expect(inputs).toEqual(pairs.flatMap((p) => [JSON.stringify(p), JSON.stringify(p)]).sort());
  });
});
