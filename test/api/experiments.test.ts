/**
 * Experiments on the real stack (API, worker, Temporal, MongoDB; transform and approval steps, and a scripted model
 * for the budget): an experiment over a 3-item dataset completes with scores; the budget stops one and says so with
 * the numbers; cancel ends the runs in flight; a worker stopped mid-experiment and started again finishes it with one
 * run per item × repetition; another user sees nothing; the comparison of two experiments flags the regression; bad
 * input is a 400 naming what is wrong. Every response is checked against the OpenAPI document.
 */
import type { Response } from 'supertest';
import { runsCollection } from '../../db/runs';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { openApiChecker } from '../helpers/openapi';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate } from '../helpers/workflows';

interface Experiment {
  id: string;
  status: string;
  message: string | null;
  progress: { done: number; total: number };
  spend: { tokens: number; model_calls: number };
  summary?: { name: string; mean: number; pass_rate: number; n: number }[];
}
interface Result {
  item_id: string;
  repetition: number;
  run_id: string;
  run_status: string;
  scores: { name: string; score: number; pass: boolean; reason: string }[];
  error: string | null;
  usage: { input_tokens: number; output_tokens: number; llm_calls: number; cost?: number };
}

const ENDED = ['completed', 'budget_exhausted', 'cancelled', 'failed'];
const PRICED = 'exp-priced-model';

describe('experiments', () => {
  let g: GraphStack;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    // One model has a price (USD per million tokens): its calls and the judge's are priced in the results.
    g = await startGraphStack({
      MODEL_PRICES: JSON.stringify({ [`openai:${PRICED}`]: { input: 1000, output: 2000 } }),
    });
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(() => g?.stop());

  const call = async (method: 'get' | 'post', path: string, body?: object, who: TestUser = g.user) => {
    const req = g.api.http[method](`/api/v1${path}`).set(who.auth);
    const res: Response = body === undefined ? await req : await req.send(body);
    oas.check(res);
    return res;
  };
  const data = <T>(res: Response, status = 200): T => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };

  /** A dataset of `{a, b}` items whose expected value is the sum, as the `add` workflow's output holds it. */
  const dataset = async (pairs: [number, number][], workflowId?: string) => {
    const ds = data<{ id: string }>(
      await call('post', '/datasets', { name: uniqueId('set-'), ...(workflowId ? { workflow_id: workflowId } : {}) }),
      201,
    );
    const items = pairs.map(([a, b]) => ({ input: { a, b }, expected: { add: { sum: a + b } } }));
    data(await call('post', `/datasets/${ds.id}/items`, { items }), 201);
    return ds.id;
  };
  /** One transform step `add`: {sum: a + b + offset} (offset 0: right; otherwise wrong). */
  const addWorkflow = (offset = 0, extra: object = {}) =>
    createWorkflow(g.api, g.user, {
      name: uniqueId('add'),
      steps: [
        {
          id: 'add',
          template_id: g.tpl.transform._id,
          config: { expression: `{"sum": a + b + ${offset}}`, data: '{{input}}' },
        },
      ],
      ...extra,
    });
  const exact = [{ kind: 'exact', path: 'add.sum' }];
  const create = async (body: object) => data<Experiment>(await call('post', '/experiments', body), 201);
  const waitEnd = async (id: string, who: TestUser = g.user): Promise<Experiment> => {
    for (let i = 0; i < 600; i++) {
      const exp = data<Experiment>(await call('get', `/experiments/${id}`, undefined, who));
      if (ENDED.includes(exp.status)) return exp;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`experiment ${id} did not end`);
  };
  const results = async (id: string) => data<Result[]>(await call('get', `/experiments/${id}/results?limit=200`));

  it('runs a 3-item dataset, scores every run, keeps the runs out of the run search', async () => {
    const wf = await addWorkflow();
    const ds = await dataset([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    const exp = await create({ dataset_id: ds, workflow_id: wf, scorers: exact, repetitions: 2, concurrency: 2 });
    expect(exp).toMatchObject({ status: 'queued', progress: { done: 0, total: 6 } });
    const ended = await waitEnd(exp.id);
    expect(ended).toMatchObject({ status: 'completed', progress: { done: 6, total: 6 }, message: null });
    expect(ended.summary).toEqual([expect.objectContaining({ name: 'exact', mean: 1, pass_rate: 1, n: 6 })]);
    const rows = await results(exp.id);
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.run_status === 'completed' && r.scores[0]!.pass)).toBe(true);
    expect(new Set(rows.map((r) => r.run_id)).size).toBe(6);
    // The runs are ordinary runs: readable by id, tagged, absent from the default search.
    const status = await g.api.http.get(`/api/v1/workflows/runs/${rows[0]!.run_id}/status`).set(g.user.auth);
    expect(status.status).toBe(200);
    const runs = await runsCollection(g.api.database.db).countDocuments({ experiment_id: exp.id });
    expect(runs).toBe(6);
    const search = data<{ run_id: string }[]>(await call('get', `/runs?workflow_id=${wf}`));
    expect(search).toEqual([]);
    const listed = data<Experiment[]>(await call('get', '/experiments'));
    expect(listed.map((e) => e.id)).toContain(exp.id);
  });

  it('stops when the budget is spent and says so with the numbers', async () => {
    const model = g.llm.script(uniqueId('budget-'), [{ text: 'ok', usage: { input: 10, output: 5 } }]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('answerer'),
      default_prompt: 'Answer.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('ask'),
      steps: [{ id: 'ask', template_id: agent._id, input: 'Say ok about {{input.a}}' }],
    });
    const ds = await dataset([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    const exp = await create({
      dataset_id: ds,
      workflow_id: wf,
      scorers: [{ kind: 'contains', value: 'ok' }],
      concurrency: 1,
      budget: { max_model_calls: 1 },
    });
    const ended = await waitEnd(exp.id);
    expect(ended.status).toBe('budget_exhausted');
    expect(ended.spend).toEqual({ tokens: 15, model_calls: 1 });
    expect(ended.message).toContain('1 of 1 model calls');
    expect(ended.message).toContain('2 of 3 runs not started');
    expect(await results(exp.id)).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
  });

  it('prices the model calls of each run and of the judge with MODEL_PRICES; a cost scorer reads it', async () => {
    const model = g.llm.script(PRICED, [
      { text: 'ok', usage: { input: 10, output: 5 } },
      { text: '{"score": 1, "reason": "fine"}', usage: { input: 20, output: 10 } },
    ]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('priced'),
      default_prompt: 'Answer.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('priced'),
      steps: [{ id: 'ask', template_id: agent._id, input: 'Say ok about {{input.a}}' }],
    });
    const exp = await create({
      dataset_id: await dataset([[1, 1]]),
      workflow_id: wf,
      scorers: [
        { kind: 'cost', max_cost: 0.01 },
        { kind: 'llm_judge', rubric: 'It says ok.', model: `openai:${model.model}` },
      ],
      concurrency: 1,
    });
    expect((await waitEnd(exp.id)).status).toBe('completed');
    const [row] = await results(exp.id);
    // The run: (10 × 1000 + 5 × 2000) / 1e6 = 0.02, over the scorer's 0.01; the judge adds (20 × 1000 + 10 × 2000) / 1e6.
    expect(row!.scores.find((sc) => sc.name === 'cost')).toMatchObject({ score: 0, pass: false });
    expect(row!.scores.find((sc) => sc.name === 'cost')!.reason).toContain('0.02');
    expect(row!.usage).toMatchObject({ input_tokens: 30, output_tokens: 15, llm_calls: 2 });
    expect(row!.usage.cost).toBeCloseTo(0.06, 9);
  });

  it('leaves the cost out when a model has no price', async () => {
    const judge = g.llm.script(uniqueId('unpriced-'), [{ text: '{"score": 1, "reason": "ok"}' }]);
    const exp = await create({
      dataset_id: await dataset([[1, 2]]),
      workflow_id: await addWorkflow(),
      scorers: [{ kind: 'llm_judge', rubric: 'Right.', model: `openai:${judge.model}` }],
    });
    expect((await waitEnd(exp.id)).status).toBe('completed');
    const [row] = await results(exp.id);
    expect(row!.usage.llm_calls).toBe(1);
    expect(row!.usage.cost).toBeUndefined();
  });

  it('scores with an LLM judge whose calls count against the budget', async () => {
    const judge = g.llm.script(uniqueId('judge-'), [
      { text: '{"score": 0.8, "reason": "close enough"}', usage: { input: 20, output: 6 } },
    ]);
    const wf = await addWorkflow();
    const ds = await dataset([
      [1, 2],
      [3, 4],
    ]);
    const exp = await create({
      dataset_id: ds,
      workflow_id: wf,
      scorers: [{ kind: 'llm_judge', rubric: 'The sum is right.', model: `openai:${judge.model}` }],
      concurrency: 1,
      budget: { max_model_calls: 1 },
    });
    const ended = await waitEnd(exp.id);
    // The transform runs make no model call: the judge's one call spends the budget.
    expect(ended).toMatchObject({ status: 'budget_exhausted', spend: { tokens: 26, model_calls: 1 } });
    const [row] = await results(exp.id);
    expect(row!.scores).toEqual([
      { name: 'llm_judge', score: 0.8, pass: true, reason: `judge (openai:${judge.model}): close enough` },
    ]);
    expect(judge.requests).toHaveLength(1);
  });

  it('cancels an experiment and the runs it has in flight', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('gated'),
      steps: [{ id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Go?' } }],
    });
    const ds = await dataset([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    const exp = await create({ dataset_id: ds, workflow_id: wf, scorers: exact, concurrency: 2 });
    const db = g.api.database.db;
    for (let i = 0; i < 300; i++) {
      if ((await runsCollection(db).countDocuments({ experiment_id: exp.id, 'steps.status': 'waiting' })) === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    data(await call('post', `/experiments/${exp.id}/cancel`), 202);
    const ended = await waitEnd(exp.id);
    expect(ended.status).toBe('cancelled');
    const runs = await runsCollection(db).find({ experiment_id: exp.id }).toArray();
    expect(runs.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    expect((await call('post', `/experiments/${exp.id}/cancel`)).status).toBe(409);
  });

  it('finishes after the worker is stopped mid-experiment, one run per item × repetition', async () => {
    const wf = await addWorkflow();
    const ds = await dataset([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    const exp = await create({ dataset_id: ds, workflow_id: wf, scorers: exact, concurrency: 1, repetitions: 2 });
    const db = g.api.database.db;
    for (let i = 0; i < 300; i++) {
      if ((await runsCollection(db).countDocuments({ experiment_id: exp.id })) >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await g.worker.stop();
    await g.restartWorker();
    const ended = await waitEnd(exp.id);
    expect(ended).toMatchObject({ status: 'completed', progress: { done: 6, total: 6 } });
    const runs = await runsCollection(db).find({ experiment_id: exp.id }).toArray();
    expect(runs).toHaveLength(6);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    expect(new Set((await results(exp.id)).map((r) => `${r.item_id}/${r.repetition}`)).size).toBe(6);
  });

  it('compares two experiments: the wrong workflow regresses', async () => {
    const right = await addWorkflow();
    const wrong = await addWorkflow(1);
    const ds = await dataset([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    const base = await create({ dataset_id: ds, workflow_id: right, scorers: exact });
    const cand = await create({ dataset_id: ds, workflow_id: wrong, scorers: exact });
    await waitEnd(base.id);
    await waitEnd(cand.id);
    const cmp = data<{
      regression: { regressed: boolean; reasons: string[] };
      counts: Record<string, number>;
      scorers: { name: string; delta: number }[];
    }>(await call('get', `/experiments/${cand.id}/compare?baseline=${base.id}`));
    expect(cmp.regression.regressed).toBe(true);
    expect(cmp.counts.regressed).toBe(3);
    expect(cmp.scorers).toEqual([expect.objectContaining({ name: 'exact', delta: -1 })]);
    // The stated threshold and tolerance: a drop of exactly 1 is not more than 1; a score moving by 1 is within 1
    // (the item still regressed: it turned from pass to fail).
    const lenient = data<{ regression: { regressed: boolean }; items: { scorers: { change: string }[] }[] }>(
      await call('get', `/experiments/${cand.id}/compare?baseline=${base.id}&regression_threshold=1&tolerance=1`),
    );
    expect(lenient.regression.regressed).toBe(false);
    expect(lenient.items.map((i) => i.scorers[0]?.change)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    // Any number the document allows, as clients print it (many digits, exponent notation).
    const printed = `regression_threshold=0.3694123523440385&tolerance=5e-2`;
    expect((await call('get', `/experiments/${cand.id}/compare?baseline=${base.id}&${printed}`)).status).toBe(200);
    for (const bad of [
      'regression_threshold=1.5',
      'regression_threshold=abc',
      'tolerance=-0.1',
      'tolerance=0x1',
      'tolerance=2e-1x',
    ]) {
      expect((await call('get', `/experiments/${cand.id}/compare?baseline=${base.id}&${bad}`)).status).toBe(400);
    }
    const same = data<{ regression: { regressed: boolean } }>(
      await call('get', `/experiments/${base.id}/compare?baseline=${base.id}`),
    );
    expect(same.regression.regressed).toBe(false);
    const otherSet = await dataset([[1, 1]]);
    const elsewhere = await create({ dataset_id: otherSet, workflow_id: right, scorers: exact });
    expect((await call('get', `/experiments/${elsewhere.id}/compare?baseline=${base.id}`)).status).toBe(400);
    await waitEnd(elsewhere.id);
  });

  it('shows another user nothing', async () => {
    const wf = await addWorkflow();
    const ds = await dataset([[1, 2]]);
    const exp = await create({ dataset_id: ds, workflow_id: wf, scorers: exact });
    await waitEnd(exp.id);
    for (const path of [`/experiments/${exp.id}`, `/experiments/${exp.id}/results`]) {
      expect((await call('get', path, undefined, other)).status).toBe(404);
    }
    expect((await call('get', `/experiments/${exp.id}/compare?baseline=${exp.id}`, undefined, other)).status).toBe(404);
    expect((await call('post', `/experiments/${exp.id}/cancel`, {}, other)).status).toBe(404);
    expect(data<Experiment[]>(await call('get', '/experiments', undefined, other))).toEqual([]);
    // Nor can they run your dataset or workflow.
    expect(
      (await call('post', '/experiments', { dataset_id: ds, workflow_id: wf, scorers: exact }, other)).status,
    ).toBe(404);
  });

  it('refuses bad input with a 400 that names what is wrong', async () => {
    const wf = await addWorkflow(0, {
      config: { input_schema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } },
    });
    const ds = await dataset([[1, 2]]);
    const message = async (body: object) => {
      const res = await call('post', '/experiments', { dataset_id: ds, workflow_id: wf, scorers: exact, ...body });
      expect(res.status).toBe(400);
      return (res.body as { error: string }).error;
    };
    expect(await message({ overrides: { nope: { model: 'openai:gpt-4o' } } })).toContain(
      'overrides.nope: the workflow has no step "nope"',
    );
    expect(await message({ overrides: { add: { model: 'openai:gpt-4o' } } })).toContain('only agent steps');
    expect(await message({ scorers: [{ kind: 'regex', pattern: '(' }] })).toContain('scorers[0].pattern');
    // Replay needs items recorded from runs; these were written by hand.
    expect(await message({ mode: 'replay' })).toContain('was not recorded from a run (it has no source_run_id)');
    expect(await message({ replay: { tool_calls: 'live' } })).toContain('only mode "replay"');
    // An item the workflow's input_schema refuses: named, with the schema's message.
    const bad = await g.api.http
      .post(`/api/v1/datasets/${ds}/items`)
      .set(g.user.auth)
      .send({ items: [{ input: { b: 1 } }] });
    expect(bad.status).toBe(201);
    const refused = await message({});
    expect(refused).toMatch(/item itm_\S+: the workflow's input_schema refuses its input: .*a/);
  });
});
