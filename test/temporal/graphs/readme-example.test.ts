/**
 * The README's graph example is the one a user pastes: its JSON, taken from the README itself, is created and run on
 * the real stack, and the run shows what the README says it shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startGraphStack, type GraphStack } from '../../helpers/graph-stack';
import { repoRoot } from '../../helpers/run-node';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

function readmeExample(): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Example: a graph'));
  const m = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section);
  if (!m) throw new Error('README: the graph example JSON was not found');
  return m[1]!;
}

describe('README graph example', () => {
  let g: GraphStack;
  beforeAll(async () => {
    g = await startGraphStack();
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('runs as documented: the map, the branch taken, the skipped one, the join', async () => {
    const json = readmeExample()
      .replace(/@transform/g, g.tpl.transform._id)
      .replace(/@wait/g, g.tpl.delay._id)
      .replace(/@approval/g, g.tpl.approval._id);
    const wf = await createWorkflow(g.api, g.user, JSON.parse(json));
    const input = {
      order: {
        items: [
          { sku: 'A', price: 20, qty: 2 },
          { sku: 'B', price: 5, qty: 3 },
        ],
      },
    };
    const runId = await startRun(g.api, g.user, wf, input);
    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs).toMatchObject({
      total: { total: 55 },
      lines: ['A: 40', 'B: 15'],
      fast_track: 'shipped without review',
      summary: { lines: ['A: 40', 'B: 15'], review: null, fast_track: 'shipped without review' },
    });
    const review = status.steps.find((s) => s.id === 'review') as unknown as Record<string, unknown>;
    expect(review).toMatchObject({
      status: 'skipped',
      skip_reason: 'condition false: steps.total.output.total >= 100',
    });
    const lines = status.steps.find((s) => s.id === 'lines') as unknown as { executions: { shown: unknown[] } };
    expect(lines.executions.shown).toEqual([
      expect.objectContaining({ exec_id: 'lines[0]', status: 'completed', output: 'A: 40' }),
      expect.objectContaining({ exec_id: 'lines[1]', status: 'completed', output: 'B: 15' }),
    ]);

    // A large order takes the other branch and waits for a human.
    const big = await startRun(g.api, g.user, wf, { order: { items: [{ sku: 'C', price: 100, qty: 1 }] } });
    await waitForStatus(g.api, g.user, big, (s) => s.status === 'waiting');
    const res = await g.api.http
      .post(`/api/v1/workflows/runs/${big}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'review', approved: true });
    expect(res.status).toBe(200);
    const done = await waitForStatus(g.api, g.user, big, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.steps.find((s) => s.id === 'fast_track')?.status).toBe('skipped');
  });
});
