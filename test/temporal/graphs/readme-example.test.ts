/**
 * The examples a user pastes, run on the real stack as written: the README's first run (a template of its own, a
 * workflow using it, a run and its status) and docs/api.md's graph example. Their JSON is taken from the documents
 * themselves, and each run shows what the document says it shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startGraphStack, type GraphStack } from '../../helpers/graph-stack';
import { repoRoot } from '../../helpers/run-node';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';
import type { JsonObject } from '../../../domain/json';

function read(file: string): string {
  return fs.readFileSync(path.join(repoRoot, file), 'utf8');
}

function graphExample(): string {
  const doc = read('docs/api.md');
  const section = doc.slice(doc.indexOf('## Example: a graph'));
  const m = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section);
  if (!m) throw new Error('docs/api.md: the graph example JSON was not found');
  return m[1]!;
}

/** The README's first run: the template's and the workflow's JSON, the run's input and the status it shows. */
function firstRun(): { template: string; workflow: string; input: string; shown: string } {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## A first run'), readme.indexOf('## How it runs'));
  const template = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section)?.[1];
  const workflow = /<<JSON\n([\s\S]*?)\nJSON\n/.exec(section)?.[1];
  const input = /sw POST "\/workflows\/\$WF\/run" \S+ '([^']*)'/.exec(section)?.[1];
  const shown = /\n# (\{"status"[^\n]*)/.exec(section)?.[1];
  if (!template || !workflow || !input || !shown) throw new Error('README: the first run example was not found');
  return { template, workflow, input, shown };
}

describe('documented examples', () => {
  let g: GraphStack;
  beforeAll(async () => {
    g = await startGraphStack();
  });
  afterAll(async () => {
    await g?.stop();
  });

  it("the README's first run: a template, a workflow using it, a run and the status it shows", async () => {
    const example = firstRun();
    const created = await g.api.http.post('/api/v1/agents').set(g.user.auth).send(JSON.parse(example.template));
    expect(created.status).toBe(201);
    const tpl = (created.body as { data: { id: string } }).data.id;
    // The workflow's heredoc is unquoted: the shell fills in the template id.
    const wf = await createWorkflow(g.api, g.user, JSON.parse(example.workflow.replace('$TPL', tpl)) as JsonObject);
    const runId = await startRun(g.api, g.user, wf, (JSON.parse(example.input) as { input: JsonObject }).input);
    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect({ status: status.status, outputs: status.outputs }).toEqual(JSON.parse(example.shown));
  });

  it('the graph of docs/api.md runs as documented: the map, the branch taken, the skipped one, the join', async () => {
    const json = graphExample()
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
