/**
 * `eval run`, the CI gate, end to end: the CLI (in-process, as the entrypoint runs it) against the real API on a
 * socket with a real worker. A baseline run exits 0 and prints the scorer table; a candidate whose workflow answers
 * wrong, gated with --fail-on-regression against it, exits 2 and writes JUnit XML the strictest common schema
 * accepts; a budget that stops the experiment exits 3; a bad flag exits 1 with a message a person can act on;
 * `--mode replay` replays items recorded from runs (nothing spent) and a dataset written by hand is refused.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, isTerminal, waitForStatus } from '../helpers/workflows';
import { junitSchemaViolations, parseXml } from '../domain/evals/junit-schema';

describe('CLI eval run against the real API', () => {
  let g: GraphStack;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    g = await startGraphStack();
    url = await g.api.listen();
    dir = await mkdtemp(path.join(tmpdir(), 'stepwise-eval-'));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };
  const addWorkflow = (offset: number | string) =>
    createWorkflow(g.api, g.user, {
      name: uniqueId('add'),
      steps: [
        {
          id: 'add',
          template_id: g.tpl.transform._id,
          config: { expression: `{"sum": a + b + ${offset}}`, data: '{{input}}' },
        },
      ],
    });
  const dataset = async () => {
    const ds = await g.api.http
      .post('/api/v1/datasets')
      .set(g.user.auth)
      .send({ name: uniqueId('set-') });
    const id = (ds.body as { data: { id: string } }).data.id;
    const items = [
      [1, 2],
      [3, 4],
      [5, 6],
    ].map(([a, b]) => ({ input: { a, b }, expected: { add: { sum: a! + b! } } }));
    await g.api.http.post(`/api/v1/datasets/${id}/items`).set(g.user.auth).send({ items });
    return id;
  };

  it('gates: the baseline passes (exit 0), a regression fails (exit 2) with valid JUnit XML', async () => {
    const ds = await dataset();
    const scorers = path.join(dir, 'scorers.json');
    await writeFile(scorers, JSON.stringify([{ kind: 'exact', path: 'add.sum' }]));

    const base = await cli('eval', 'run', '--dataset', ds, '--workflow', await addWorkflow(0), '--scorers', scorers);
    expect(base.err).toEqual([]);
    expect(base.code).toBe(0);
    const baseline = /^experiment (exp_\S+): 3 runs$/.exec(base.out[0]!)?.[1];
    expect(baseline).toBeDefined();
    expect(base.out).toContain('completed');
    expect(base.out.find((l) => l.startsWith('exact'))).toMatch(/^exact\s+1\.000\s+0\.000\s+1\.000\s+3$/);

    const junit = path.join(dir, 'out.xml');
    const cand = await cli(
      'eval',
      'run',
      '--dataset',
      ds,
      '--workflow',
      await addWorkflow(1),
      '--scorers',
      scorers,
      '--baseline',
      baseline!,
      '--fail-on-regression',
      '--junit',
      junit,
    );
    expect(cand.code).toBe(2);
    expect(cand.out).toContain('items: 0 improved, 3 regressed, 0 mixed, 0 unchanged');
    expect(cand.out.some((l) => l.startsWith('REGRESSION: '))).toBe(true);
    const xml = await readFile(junit, 'utf8');
    expect(junitSchemaViolations(parseXml(xml))).toEqual([]);
    expect(xml).toContain('failures="3"');

    // The same candidate without the flag: the regression is printed, the exit is 0.
    const unflagged = await cli(
      'eval',
      'run',
      '--dataset',
      ds,
      '--workflow',
      await addWorkflow(1),
      '--scorers',
      scorers,
      '--baseline',
      baseline!,
    );
    expect(unflagged.code).toBe(0);
  });

  it('gates on the stated threshold: a drop of 1/3 passes --threshold 0.4 and fails --threshold 0.3', async () => {
    const ds = await dataset();
    const scorers = path.join(dir, 'scorers-threshold.json');
    await writeFile(scorers, JSON.stringify([{ kind: 'exact', path: 'add.sum' }]));
    const base = await cli('eval', 'run', '--dataset', ds, '--workflow', await addWorkflow(0), '--scorers', scorers);
    const baseline = /^experiment (exp_\S+): 3 runs$/.exec(base.out[0]!)?.[1];
    expect(baseline).toBeDefined();
    // Wrong on the first item only: the mean falls from 1 to 2/3.
    const oneWrong = await addWorkflow('(a = 1 ? 1 : 0)');
    const gate = (threshold: string) =>
      cli(
        'eval',
        'run',
        ...['--dataset', ds, '--workflow', oneWrong, '--scorers', scorers, '--baseline', baseline!],
        ...['--fail-on-regression', '--threshold', threshold],
      );
    const lenient = await gate('0.4');
    expect(lenient.err).toEqual([]);
    expect(lenient.out).toContain('items: 0 improved, 1 regressed, 0 mixed, 2 unchanged');
    expect(lenient.out).toContain('no regression');
    expect(lenient.code).toBe(0);
    const strict = await gate('0.3');
    expect(strict.out).toContain('REGRESSION: exact: mean 1 → 0.67 (-0.33, a drop of more than 0.3)');
    expect(strict.code).toBe(2);

    const bad = await cli(
      'eval',
      'run',
      '--dataset',
      ds,
      '--workflow',
      oneWrong,
      '--baseline',
      baseline!,
      '--threshold',
      '5%',
    );
    expect(bad.code).toBe(1);
    expect(bad.err.join('\n')).toContain('--threshold: a decimal number from 0 to 1');
  });

  it('exits 3 when the budget stops the experiment, 1 on a bad flag', async () => {
    const model = g.llm.script(uniqueId('gate-'), [{ text: 'ok', usage: { input: 3, output: 2 } }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('answerer'),
      default_prompt: 'Answer.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('ask'),
      steps: [{ id: 'ask', template_id: agent._id, input: 'Say ok' }],
    });
    const ds = await dataset();
    const spent = await cli(
      'eval',
      'run',
      '--dataset',
      ds,
      '--workflow',
      wf,
      '--concurrency',
      '1',
      '--max-model-calls',
      '1',
    );
    expect(spent.code).toBe(3);
    expect(spent.out.some((l) => l.startsWith('budget_exhausted: the budget is spent'))).toBe(true);

    const bad = await cli('eval', 'run', '--dataset', ds, '--workflow', wf, '--model', 'ask');
    expect(bad.code).toBe(1);
    expect(bad.err.join('\n')).toContain('--model ask: write step=provider:model');
    const missing = await cli('eval', 'run', '--dataset', ds, '--workflow', wf, '--model', 'nope=openai:gpt-4o');
    expect(missing.code).toBe(1);
    expect(missing.err.join('\n')).toContain('overrides.nope');
  });

  it('replays items recorded from runs with --mode replay; refuses what replay cannot do', async () => {
    const wf = await addWorkflow(0);
    const start = await g.api.http
      .post(`/api/v1/workflows/${wf}/run`)
      .set(g.user.auth)
      .send({ input: { a: 2, b: 3 } });
    const runId = (start.body as { data: { run_id: string } }).data.run_id;
    await waitForStatus(g.api, g.user, runId, isTerminal);
    const ds = await g.api.http
      .post('/api/v1/datasets')
      .set(g.user.auth)
      .send({ name: uniqueId('rec-') });
    const recorded = (ds.body as { data: { id: string } }).data.id;
    const added = await g.api.http
      .post(`/api/v1/datasets/${recorded}/items/from-runs`)
      .set(g.user.auth)
      .send({ run_ids: [runId] });
    expect(added.status).toBe(201);
    const replay = await cli('eval', 'run', '--dataset', recorded, '--workflow', wf, '--mode', 'replay');
    expect(replay.code).toBe(0);
    expect(replay.out.join('\n')).toContain('spent: 0 tokens, 0 model calls');
    const id = /experiment (exp_\S+):/.exec(replay.out[0]!)?.[1];
    const exp = await g.api.http.get(`/api/v1/experiments/${id}`).set(g.user.auth);
    expect((exp.body as { data: { mode: string } }).data.mode).toBe('replay');

    const handMade = await dataset();
    const refused = await cli('eval', 'run', '--dataset', handMade, '--workflow', wf, '--mode', 'replay');
    expect(refused.code).toBe(1);
    expect(refused.err.join('\n')).toContain('was not recorded from a run');
    const lone = await cli('eval', 'run', '--dataset', recorded, '--workflow', wf, '--tool-calls', 'live');
    expect(lone.code).toBe(1);
    expect(lone.err.join('\n')).toContain('--tool-calls needs --mode replay');
  });
});
