/**
 * Write-time validation of workflow graphs through the real API (real database; no worker needed): every rule is a
 * 400 `invalid_workflow` naming the step and the field, a valid graph is stored and read back as written, and the
 * snapshot a run takes has its dependencies resolved, its defaults filled in and its sub-workflows inlined.
 */
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, insertTemplate } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import { runsCollection } from '../../db/runs';
import type { ActionType } from '../../temporal/actions/types';
import type { WorkflowStepSnapshot } from '../../domain/run';

describe('workflow graphs: definitions', () => {
  let api: TestApi;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  beforeAll(async () => {
    api = await startTestApi(
      testConfig({ MAP_MAX_CONCURRENCY: '10', LOOP_MAX_ITERATIONS: '20', SUBWORKFLOW_MAX_DEPTH: '2' }),
    );
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(() => api?.close());

  const t = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    template_id: tpl.transform._id,
    config: { expression: '1' },
    ...extra,
  });
  const post = (steps: unknown[], config: Record<string, unknown> = {}) =>
    api.http.post('/api/v1/workflows').set(user.auth).send({ name: 'g', steps, config });
  const expect400 = async (steps: unknown[], message: string, config: Record<string, unknown> = {}) => {
    const res = await post(steps, config);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
  };

  it('stores a branching, parallel, mapping, looping definition and reads it back unchanged', async () => {
    const child = await createWorkflow(api, user, { name: 'child', steps: [t('inner')] });
    const steps = [
      t('start'),
      t('left', { depends_on: ['start'], when: 'steps.start.output == 1', on_error: 'continue' }),
      t('right', { depends_on: ['start'], when: '!(steps.start.output == 1)' }),
      t('each', {
        depends_on: [],
        map: { over: '{{input.items}}', concurrency: 3, on_item_error: 'continue' },
        config: { expression: '$', data: '{{map.item}}' },
      }),
      t('again', { depends_on: [], loop: { until: 'steps.again.output >= 3', max_iterations: 5 } }),
      { id: 'sub', workflow_id: child, depends_on: ['left', 'right'], trigger: 'all_done', input: { x: 1 } },
    ];
    const res = await post(steps, { input_schema: { type: 'object', properties: { items: { type: 'array' } } } });
    expect(res.status).toBe(201);
    expect(res.body.data.steps).toEqual(steps);

    // The snapshot of a run: dependencies resolved, defaults filled in, the sub-workflow inlined.
    const start = await api.http
      .post(`/api/v1/workflows/${res.body.data.id}/run`)
      .set(user.auth)
      .send({ input: { items: [1] } });
    expect(start.status).toBe(202);
    const doc = await runsCollection(api.database.db).findOne({ _id: start.body.data.run_id });
    const snapshot = doc!.snapshot;
    expect(snapshot.limits).toEqual({
      map_max_items: 1000,
      map_max_concurrency: 10,
      loop_max_iterations: 20,
      max_depth: 2,
    });
    expect(snapshot.steps.map((s) => [s.id, s.depends_on])).toEqual([
      ['start', []],
      ['left', ['start']],
      ['right', ['start']],
      ['each', []],
      ['again', []],
      ['sub', ['left', 'right']],
    ]);
    expect(snapshot.steps[3]!.map).toEqual({ over: '{{input.items}}', concurrency: 3, on_item_error: 'continue' });
    const sub = snapshot.steps[5] as WorkflowStepSnapshot;
    expect(sub).toMatchObject({ kind: 'workflow', template_id: child, trigger: 'all_done' });
    expect(sub.workflow.steps).toEqual([expect.objectContaining({ id: 'inner', kind: 'action', depends_on: [] })]);
  });

  it('keeps a definition without depends_on meaning "in order"', async () => {
    const res = await post([t('a'), t('b'), t('c')]);
    expect(res.status).toBe(201);
    const start = await api.http.post(`/api/v1/workflows/${res.body.data.id}/run`).set(user.auth).send({});
    const doc = await runsCollection(api.database.db).findOne({ _id: start.body.data.run_id });
    expect(doc!.snapshot.steps.map((s) => s.depends_on)).toEqual([[], ['a'], ['b']]);
  });

  it('refuses unknown, self and repeated dependencies', async () => {
    await expect400([t('a', { depends_on: ['zz'] })], 'steps[0] (a).depends_on[0]: unknown step "zz"');
    await expect400([t('a', { depends_on: ['a'] })], 'steps[0] (a).depends_on[0]: a step cannot depend on itself');
    await expect400([t('a'), t('b', { depends_on: ['a', 'a'] })], 'steps[1] (b).depends_on[1]: "a" is listed twice');
  });

  it('refuses cycles, naming the steps on them', () =>
    expect400(
      [
        t('a', { depends_on: ['c'] }),
        t('b', { depends_on: ['a'] }),
        t('c', { depends_on: ['b'] }),
        t('d', { depends_on: [] }),
      ],
      'depends_on: the steps "a", "b", "c" form a cycle',
    ));

  it('refuses steps that can never run', async () => {
    await expect400([t('a', { when: '1 == 2' })], 'steps[0] (a).when: the condition is always false');
    await expect400(
      [t('a', { when: 'false' }), t('b', { depends_on: ['a'] })],
      'steps[1] (b).depends_on: the step can never run',
    );
    // A join that runs whatever happened to its dependencies is fine.
    const ok = await post([t('a', { when: 'input.x == 1' }), t('b', { depends_on: ['a'], trigger: 'all_done' })]);
    expect(ok.status).toBe(201);
  });

  it('refuses references to steps that are not guaranteed to have finished', async () => {
    await expect400(
      [t('a', { depends_on: [] }), t('b', { depends_on: [], config: { expression: '$', data: '{{steps.a.output}}' } })],
      'steps[1] (b).config.data: {{steps.a.output}} refers to "a", which is not guaranteed to have finished',
    );
    await expect400(
      [t('a', { depends_on: [] }), t('b', { depends_on: [], when: 'steps.a.status == "completed"' })],
      'steps[1] (b).when: {{steps.a.status}} refers to "a", which is not guaranteed to have finished',
    );
    // Indirect dependencies are guaranteed.
    const ok = await post([
      t('a'),
      t('b', { depends_on: ['a'] }),
      t('c', {
        depends_on: ['b'],
        when: 'steps.a.output == 1',
        config: { expression: '$', data: '{{steps.a.output}}' },
      }),
    ]);
    expect(ok.status).toBe(201);
  });

  it('refuses map.* and loop.* references outside map and loop steps', async () => {
    await expect400(
      [t('a', { config: { expression: '$', data: '{{map.item}}' } })],
      'steps[0] (a).config.data: {{map.item}} is only available in a map step',
    );
    await expect400(
      [t('a', { config: { expression: '$', data: '{{loop.iteration}}' } })],
      'is only available in a loop step',
    );
    await expect400(
      [t('a', { map: { over: '{{input.xs}}' }, when: 'map.index == 0' })],
      'steps[0] (a).when: {{map.index}} cannot be used here',
    );
  });

  it('refuses maps over something that is not a list', async () => {
    await expect400([t('a', { map: { over: 'items' } })], 'steps[0] (a).map.over: must be exactly one reference');
    await expect400(
      [t('a', { map: { over: '{{input.name}}' } })],
      'steps[0] (a).map.over: {{input.name}} is not a list in config.input_schema (type string)',
      { input_schema: { type: 'object', properties: { name: { type: 'string' } } } },
    );
    await expect400(
      [
        { id: 'wait', template_id: tpl.delay._id, config: { seconds: 1 } },
        t('a', { map: { over: '{{steps.wait.output}}' } }),
      ],
      'steps[1] (a).map.over: {{steps.wait.output}} is not a list',
    );
    await expect400([t('s'), t('a', { map: { over: '{{steps.s.status}}' } })], 'is a status, not a list');
    const writer = await insertTemplate(api.database.db, user.id, {
      step_type: 'agent',
      name: 'writer',
      default_prompt: 'Write.',
      default_tools: [],
      model: 'openai:gpt-4o-mini',
    });
    await expect400(
      [{ id: 'w', template_id: writer._id }, t('a', { map: { over: '{{steps.w.output}}' } })],
      'steps[1] (a).map.over: {{steps.w.output}} is text (the agent step has no output_schema)',
    );
  });

  it('refuses loops without a bound, over the limit, and combined with a map', async () => {
    await expect400([t('a', { loop: { until: 'true' } })], 'loop.max_iterations');
    await expect400(
      [t('a', { loop: { until: 'steps.a.output == 1', max_iterations: 21 } })],
      'steps[0] (a).loop.max_iterations: at most 20 (LOOP_MAX_ITERATIONS)',
    );
    await expect400(
      [t('a', { map: { over: '{{input.xs}}' }, loop: { until: 'true', max_iterations: 2 } })],
      'steps[0] (a).loop: map and loop cannot be combined',
    );
    await expect400(
      [t('a', { map: { over: '{{input.xs}}', concurrency: 11 } })],
      'steps[0] (a).map.concurrency: at most 10',
    );
  });

  it('refuses conditions that do not parse, naming the step, the field and the position', async () => {
    await expect400([t('a', { when: 'input.x ==' })], 'steps[0] (a).when: at 10: expected an operand');
    await expect400([t('a', { loop: { until: 'len(', max_iterations: 2 } })], 'steps[0] (a).loop.until: at');
    await expect400([t('a', { when: 'frobnicate(1)' })], 'steps[0] (a).when:');
  });

  it('sub-workflows: one of template_id and workflow_id, known, no cycles, bounded depth', async () => {
    await expect400([{ id: 'a' }], 'steps[0] (a).template_id: exactly one of template_id and workflow_id');
    await expect400([{ id: 'a', template_id: tpl.transform._id, workflow_id: 'wf_x' }], 'exactly one of');
    await expect400(
      [{ id: 'a', workflow_id: 'wf_missing0000' }],
      'steps[0] (a).workflow_id: unknown workflow "wf_missing0000"',
    );
    const leaf = await createWorkflow(api, user, { name: 'leaf', steps: [t('x')] });
    await expect400(
      [{ id: 'a', workflow_id: leaf, prompt: 'no' }],
      'steps[0] (a).prompt: a sub-workflow step does not take prompt',
    );
    const mid = await createWorkflow(api, user, { name: 'mid', steps: [{ id: 'call', workflow_id: leaf }] });
    const top = await createWorkflow(api, user, { name: 'top', steps: [{ id: 'call', workflow_id: mid }] });
    // top → mid → leaf is depth 2 (the limit here); one more level is refused.
    await expect400(
      [{ id: 'call', workflow_id: top }],
      'steps[0] (call).workflow_id: sub-workflows would nest 3 deep; the limit is 2',
    );
    // PATCH leaf to call top: top → mid → leaf → top is a cycle.
    const res = await api.http
      .patch(`/api/v1/workflows/${leaf}`)
      .set(user.auth)
      .send({ steps: [{ id: 'back', workflow_id: top }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('steps[0] (back).workflow_id:');
    expect(res.body.error).toMatch(/cycle|nest/);
    const self = await api.http
      .patch(`/api/v1/workflows/${leaf}`)
      .set(user.auth)
      .send({ steps: [{ id: 'me', workflow_id: leaf }] });
    expect(self.status).toBe(400);
    expect(self.body.error).toContain('steps[0] (me).workflow_id: a workflow cannot call itself');
    // Another user's workflow is unknown.
    const other = await createTestUser(api.database.db);
    const res2 = await api.http
      .post('/api/v1/workflows')
      .set(other.auth)
      .send({ name: 'x', steps: [{ id: 'a', workflow_id: leaf }] });
    expect(res2.status).toBe(400);
    expect(res2.body.error).toContain(`unknown workflow "${leaf}"`);
  });

  it('refuses unknown trigger and on_error values by name', async () => {
    await expect400([t('a', { trigger: 'sometimes' })], 'steps[0].trigger');
    await expect400([t('a', { on_error: 'ignore' })], 'steps[0].on_error');
  });

  it('a run starts only when its sub-workflow tree still holds (a called workflow deleted since → 422)', async () => {
    const leaf = await createWorkflow(api, user, { name: 'leaf2', steps: [t('x')] });
    const top = await createWorkflow(api, user, { name: 'top2', steps: [{ id: 'call', workflow_id: leaf }] });
    await api.http.delete(`/api/v1/workflows/${leaf}`).set(user.auth);
    const res = await api.http.post(`/api/v1/workflows/${top}/run`).set(user.auth).send({});
    expect(res.status).toBe(422);
    expect(res.body.error).toContain(`steps[0] (call).workflow_id: unknown workflow "${leaf}"`);
  });

  it('approvals take execution ids; anything else is a 400 naming step_id', async () => {
    const wf = await createWorkflow(api, user, { name: 'a', steps: [t('a')] });
    const start = await api.http.post(`/api/v1/workflows/${wf}/run`).set(user.auth).send({});
    const runId = start.body.data.run_id as string;
    const bad = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'a[x]', approved: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('step_id');
    const notMap = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'a[1]', approved: true });
    expect(notMap.status).toBe(400);
  });
});
