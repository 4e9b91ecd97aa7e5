/**
 * Definitions as code, end to end: docs/cli.md's workflow file (docs/examples/order-total.yaml) applies unchanged to
 * two deployments on two databases and runs on both, started and read with the generated client exactly as
 * docs/api.md shows; re-applying changes nothing, a change is reported by field (and `--dry-run` writes nothing), a bad
 * file names file, step and field and writes nothing, and `export` gives back a file `apply` takes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { createStepwiseClient } from '../../client';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

const ROOT = path.resolve(__dirname, '../..');
const EXAMPLE = path.join(ROOT, 'docs/examples/order-total.yaml');

interface Deployment {
  api: TestApi;
  worker: TestWorker;
  user: TestUser;
  url: string;
}

async function deploy(): Promise<Deployment> {
  const api = await startTestApi(testConfig());
  const worker = await startTestWorker(api.config, api.database);
  const user = await createTestUser(api.database.db);
  return { api, worker, user, url: await api.listen() };
}

async function cli(d: Deployment, ...args: string[]) {
  const config = loadConfig({ STEPWISE_URL: d.url, STEPWISE_API_KEY: d.user.key });
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

/** docs/api.md's client example: start a run, wait for it, read its outputs. */
async function runWithClient(
  d: Deployment,
  workflowId: string,
  order: { items: { price: number }[] },
): Promise<unknown> {
  const api = createStepwiseClient({ baseUrl: d.url, apiKey: d.user.key });
  const started = await api.POST('/api/v1/workflows/{id}/run', {
    params: { path: { id: workflowId } },
    body: { input: { order } },
  });
  const runId = started.data!.data.run_id;
  let run;
  do
    run = (await api.GET('/api/v1/workflows/runs/{runId}/status', { params: { path: { runId }, query: { wait: 30 } } }))
      .data!.data;
  while (['queued', 'running', 'waiting'].includes(run.status));
  return run.outputs;
}

describe('workflows apply / export across two deployments', () => {
  let a: Deployment;
  let b: Deployment;
  let dir: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([deploy(), deploy()]);
    dir = await mkdtemp(path.join(tmpdir(), 'stepwise-defs-'));
  }, 120_000);
  afterAll(async () => {
    for (const d of [a, b]) {
      await d?.worker.stop();
      await d?.api.close();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is the file docs/cli.md shows', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/cli.md'), 'utf8');
    const file = await readFile(EXAMPLE, 'utf8');
    expect(doc).toContain(
      file
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n')
        .trim(),
    );
  });

  it('applies the same file to two databases, and it runs on both', async () => {
    for (const d of [a, b]) {
      const applied = await cli(d, 'workflows', 'apply', '-f', EXAMPLE);
      expect(applied).toMatchObject({ code: 0, err: [] });
      expect(applied.out).toEqual([expect.stringMatching(/^created workflow "Order total" wf_\S+$/)]);
      const id = applied.out[0]!.split(' ').at(-1)!;
      const outputs = await runWithClient(d, id, { items: [{ price: 2 }, { price: 3 }] });
      expect(outputs).toMatchObject({ total: { total: 5, count: 2 }, pause: { waited_seconds: 2 } });
    }
  });

  it('reports nothing to do, then a change by field; --dry-run writes nothing', async () => {
    const again = await cli(a, 'workflows', 'apply', '-f', EXAMPLE);
    expect(again.out).toEqual([expect.stringMatching(/^unchanged workflow "Order total" wf_/)]);

    const changed = path.join(dir, 'changed.yaml');
    const text = await readFile(EXAMPLE, 'utf8');
    await writeFile(changed, text.replace('$sum(items.price)', '$sum(items.price) * 2'));
    const dry = await cli(a, 'workflows', 'apply', '-f', changed, '--dry-run');
    expect(dry.out).toEqual([
      expect.stringMatching(/^would update workflow "Order total" wf_\S+: steps\.total\.config\.expression$/),
    ]);
    expect((await cli(a, 'workflows', 'apply', '-f', EXAMPLE)).out[0]).toMatch(/^unchanged/);

    const applied = await cli(a, 'workflows', 'apply', '-f', changed);
    expect(applied.out).toEqual([
      expect.stringMatching(/^updated workflow "Order total" wf_\S+: steps\.total\.config\.expression$/),
    ]);
    expect((await cli(a, 'workflows', 'apply', '-f', EXAMPLE)).out[0]).toMatch(/^updated/);
  });

  it('names file, workflow, step and field of every problem, and writes nothing when one definition is bad', async () => {
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(
      bad,
      [
        'name: Fine one',
        'steps:',
        '  - { id: shape, template: Transform data, config: { expression: "$" } }',
        '---',
        'name: Broken one',
        'steps:',
        '  - { id: shape, template: Transform data, config: { expression: "$" } }',
        '  - { id: lookup, template: No such template }',
        '',
      ].join('\n'),
    );
    const res = await cli(a, 'workflows', 'apply', '-f', bad);
    expect(res.code).toBe(1);
    expect(res.err).toContain(
      `${bad}#2: workflow "Broken one": step "lookup": field "template": no template named "No such template" ` +
        '(GET /api/v1/agents lists yours and the system ones)',
    );
    expect(res.err.at(-1)).toContain('nothing was written');
    const listed = await a.api.http.get('/api/v1/workflows').set(a.user.auth);
    expect(listed.body.data.map((w: { name: string }) => w.name)).toEqual(['Order total']);

    const shape = path.join(dir, 'shape.json');
    await writeFile(
      shape,
      JSON.stringify({
        name: 'Shape',
        steps: [{ id: 'x', template_id: 'tpl_sys_transform', retry: { max_attempts: 99 } }],
      }),
    );
    const shaped = await cli(a, 'workflows', 'apply', '-f', shape, '--dry-run');
    expect(shaped.code).toBe(1);
    expect(shaped.err[0]).toMatch(/^.*shape\.json: workflow "Shape": step "x": field "retry\.max_attempts": /);

    const syntax = path.join(dir, 'syntax.yaml');
    await writeFile(syntax, 'name: [unclosed\n');
    const broken = await cli(a, 'workflows', 'apply', '-f', syntax);
    expect(broken.code).toBe(1);
    expect(broken.err.join('\n')).toContain(`${syntax}:`);
  });

  it('exports a workflow as a file that applies back unchanged, its templates by name where written so', async () => {
    const id = (await cli(b, 'workflows', 'apply', '-f', EXAMPLE)).out[0]!.split(' ').at(-1)!;
    const exported = await cli(b, 'workflows', 'export', id);
    expect(exported.code).toBe(0);
    const body = parse(exported.out.join('\n'));
    expect(body).toEqual(parse(await readFile(EXAMPLE, 'utf8')));
    const file = path.join(dir, 'exported.yaml');
    await writeFile(file, exported.out.join('\n'));
    expect((await cli(a, 'workflows', 'apply', '-f', file)).out[0]).toMatch(/^unchanged workflow "Order total"/);
  });

  it('re-resolves a template name when its template was re-created, though the file did not change', async () => {
    const agents = path.join(dir, 'helper.yaml');
    await writeFile(agents, 'name: Helper bot\ndefault_prompt: Help.\n');
    const first = (await cli(b, 'agents', 'apply', '-f', agents)).out[0]!.split(' ').at(-1)!;
    const workflow = path.join(dir, 'uses-helper.yaml');
    await writeFile(workflow, 'name: Uses helper\nsteps:\n  - { id: ask, template: Helper bot }\n');
    expect((await cli(b, 'workflows', 'apply', '-f', workflow)).out[0]).toMatch(/^created/);

    expect((await b.api.http.delete(`/api/v1/agents/${first}`).set(b.user.auth)).status).toBe(200);
    const gone = await cli(b, 'workflows', 'apply', '-f', workflow);
    expect(gone.code).toBe(1);
    expect(gone.err[0]).toContain('step "ask": field "template": no template named "Helper bot"');

    const second = (await cli(b, 'agents', 'apply', '-f', agents)).out[0]!.split(' ').at(-1)!;
    expect(second).not.toBe(first);
    const again = await cli(b, 'workflows', 'apply', '-f', workflow);
    expect(again.out).toEqual([
      expect.stringMatching(/^updated workflow "Uses helper" wf_\S+: steps\.ask\.template_id$/),
    ]);
    const stored = await b.api.http.get('/api/v1/workflows').set(b.user.auth);
    const uses = (stored.body.data as { name: string; steps: { template_id: string }[] }[]).find(
      (w) => w.name === 'Uses helper',
    );
    expect(uses!.steps[0]!.template_id).toBe(second);
    expect((await cli(b, 'workflows', 'apply', '-f', workflow)).out[0]).toMatch(/^unchanged/);
  });

  it('applies and exports agent templates by name', async () => {
    const file = path.join(dir, 'agents.yaml');
    await writeFile(file, 'name: Triage\ndefault_prompt: Sort the ticket.\ntags: [support]\n');
    const created = await cli(a, 'agents', 'apply', '-f', file);
    expect(created.out).toEqual([expect.stringMatching(/^created template "Triage" tpl_\S+$/)]);
    expect((await cli(a, 'agents', 'apply', '-f', file)).out).toEqual([
      expect.stringMatching(/^unchanged template "Triage"/),
    ]);
    await writeFile(file, 'name: Triage\ndefault_prompt: Sort the ticket by urgency.\ntags: [support]\n');
    expect((await cli(a, 'agents', 'apply', '-f', file)).out).toEqual([
      expect.stringMatching(/^updated template "Triage" tpl_\S+: default_prompt$/),
    ]);
    const id = created.out[0]!.split(' ').at(-1)!;
    const exported = parse((await cli(a, 'agents', 'export', id)).out.join('\n'));
    expect(exported).toMatchObject({
      name: 'Triage',
      default_prompt: 'Sort the ticket by urgency.',
      tags: ['support'],
    });
    expect(exported).not.toHaveProperty('id');

    // The server stores names trimmed and keeps one template per name: a name written with spaces is that template.
    await writeFile(file, 'name: "  Triage "\ndefault_prompt: Sort the ticket by urgency.\ntags: [support]\n');
    const spaced = await cli(a, 'agents', 'apply', '-f', file);
    expect(spaced).toMatchObject({ code: 0, err: [] });
    expect(spaced.out).toEqual([`unchanged template "Triage" ${id}`]);
  });
});
