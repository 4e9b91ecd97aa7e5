/**
 * The workflows API against the real app, a real MongoDB wire server and the real Temporal server (no worker: runs
 * stay queued, which is all these tests need): CRUD, write-time validation naming step and field, owner isolation on
 * every route, paging, and idempotent starts.
 */
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, insertTemplate } from '../helpers/workflows';
import { runsCollection } from '../../db/runs';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';

describe('workflows API', () => {
  let api: TestApi;
  let alice: TestUser;
  let bob: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  beforeAll(async () => {
    api = await startTestApi(testConfig({ PUBLIC_URL: 'http://stepwise.test' }));
    alice = await createTestUser(api.database.db);
    bob = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, alice.id);
  });
  afterAll(() => api?.close());

  const simple = () => ({
    name: 'simple',
    description: 'one transform',
    steps: [{ id: 'shape', template_id: tpl.transform._id, config: { expression: '$' } }],
  });

  describe('CRUD', () => {
    it('creates, reads, lists, updates and deletes a workflow', async () => {
      const created = await api.http.post('/api/v1/workflows').set(alice.auth).send(simple());
      expect(created.status).toBe(201);
      const id = created.body.data.id as string;
      expect(id).toMatch(/^wf_/);
      expect(created.headers.location).toBe(`/api/v1/workflows/${id}`);
      expect(created.body.data).toMatchObject({ name: 'simple', steps: [{ id: 'shape' }], config: {} });

      const read = await api.http.get(`/api/v1/workflows/${id}`).set(alice.auth);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(created.body.data);

      const list = await api.http.get('/api/v1/workflows').set(alice.auth);
      expect(list.status).toBe(200);
      expect(list.body.data.map((w: { id: string }) => w.id)).toContain(id);

      const patched = await api.http.patch(`/api/v1/workflows/${id}`).set(alice.auth).send({ name: 'renamed' });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ id, name: 'renamed', description: 'one transform' });

      const empty = await api.http.patch(`/api/v1/workflows/${id}`).set(alice.auth).send({});
      expect(empty.status).toBe(400);
      expect(empty.body.error).toContain('at least one field');

      const deleted = await api.http.delete(`/api/v1/workflows/${id}`).set(alice.auth);
      expect(deleted.status).toBe(200);
      expect((await api.http.get(`/api/v1/workflows/${id}`).set(alice.auth)).status).toBe(404);
    });

    it('pages the list with limit and a Link header', async () => {
      const user = await createTestUser(api.database.db);
      const own = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(
          await createWorkflow(api, user, {
            name: `w${i}`,
            steps: [{ id: 's', template_id: own._id, config: { expression: '1' } }],
          }),
        );
      }
      const first = await api.http.get('/api/v1/workflows?limit=2').set(user.auth);
      expect(first.body.data).toHaveLength(2);
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.link as string)?.[1];
      expect(next).toBeDefined();
      expect(next).toMatch(/^http:\/\/stepwise\.test\/api\/v1\/workflows\?/);
      const second = await api.http.get(new URL(next!).pathname + new URL(next!).search).set(user.auth);
      expect(second.body.data).toHaveLength(1);
      expect(second.headers.link).toBeUndefined();
      expect([...first.body.data, ...second.body.data].map((w: { id: string }) => w.id).sort()).toEqual(ids.sort());
    });

    it('requires authentication', async () => {
      expect((await api.http.get('/api/v1/workflows')).status).toBe(401);
      expect((await api.http.get('/api/v1/workflows/runs/run_abcdefghijkl/status')).status).toBe(401);
    });
  });

  describe('validation names the step and the field', () => {
    const expect400 = async (body: object, ...fragments: string[]) => {
      const res = await api.http.post('/api/v1/workflows').set(alice.auth).send(body);
      expect(res.status).toBe(400);
      for (const f of fragments) expect(res.body.error).toContain(f);
      return res;
    };

    it('refuses duplicate step ids', () =>
      expect400(
        { name: 'dup', steps: [simple().steps[0], simple().steps[0]] },
        'steps[1] (shape).id: duplicate step id "shape"',
      ));

    it('refuses ids that are not slugs', () =>
      expect400({ name: 'slug', steps: [{ id: 'Bad Id', template_id: tpl.transform._id }] }, 'steps[0].id'));

    it("refuses unknown templates and other users' templates", async () => {
      const bobs = await insertTemplate(api.database.db, bob.id, { step_type: 'action', action_type: 'transform' });
      await expect400(
        {
          name: 'x',
          steps: [
            { id: 'a', template_id: 'tpl_doesnotexist123' },
            { id: 'b', template_id: bobs._id },
          ],
        },
        'steps[0] (a).template_id: unknown template',
        `steps[1] (b).template_id: unknown template "${bobs._id}"`,
      );
    });

    it('refuses unknown tool overrides', async () => {
      const agent = await insertTemplate(api.database.db, alice.id, { step_type: 'agent' });
      await expect400(
        { name: 'x', steps: [{ id: 'think', template_id: agent._id, tools: ['calculator', 'teleport'] }] },
        'steps[0] (think).tools[1]: unknown tool "teleport"',
      );
    });

    it('refuses forward and unknown step references', () =>
      expect400(
        {
          name: 'x',
          steps: [
            { id: 'a', template_id: tpl.transform._id, config: { expression: '$', data: '{{steps.b.output}}' } },
            { id: 'b', template_id: tpl.transform._id, config: { expression: '$' } },
          ],
        },
        'steps[0] (a).config.data: {{steps.b.output}} refers to "b", which is not an earlier step',
      ));

    it('refuses input references outside config.input_schema', () =>
      expect400(
        {
          name: 'x',
          config: { input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
          steps: [{ id: 'a', template_id: tpl.transform._id, config: { expression: '$', data: '{{input.country}}' } }],
        },
        'steps[0] (a).config.data: {{input.country}} is not in config.input_schema',
      ));

    it('refuses action configs that break the action type rules', () =>
      expect400(
        {
          name: 'x',
          steps: [{ id: 'mail', template_id: tpl.send_email._id, config: { to: 'not an address', colour: 'red' } }],
        },
        'steps[0] (mail).config.to',
        'steps[0] (mail).config',
        'colour',
      ));

    it('refuses more than 50 steps', () =>
      expect400(
        { name: 'x', steps: Array.from({ length: 51 }, (_, i) => ({ id: `s${i}`, template_id: tpl.transform._id })) },
        'steps: too many items (max 50)',
      ));

    it('refuses an invalid input_schema', () =>
      expect400(
        { name: 'x', config: { input_schema: { type: 'nonsense' } }, steps: simple().steps },
        'config.input_schema: not a valid JSON Schema',
      ));

    it('validates PATCH the same way', async () => {
      const id = await createWorkflow(api, alice, simple());
      const res = await api.http
        .patch(`/api/v1/workflows/${id}`)
        .set(alice.auth)
        .send({ steps: [{ id: 'a', template_id: tpl.transform._id, config: { data: '{{steps.a.output}}' } }] });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('steps[0] (a).config.data: {{steps.a.output}} refers to the step itself');
    });
  });

  describe('owner isolation: user B gets 404 for every id of user A', () => {
    let wfId: string;
    let runId: string;
    beforeAll(async () => {
      wfId = await createWorkflow(api, alice, simple());
      const res = await api.http.post(`/api/v1/workflows/${wfId}/run`).set(alice.auth).send({});
      expect(res.status).toBe(202);
      runId = res.body.data.run_id;
    });

    it.each([
      ['GET', '/workflows/:id', () => `/api/v1/workflows/${wfId}`],
      ['PATCH', '/workflows/:id', () => `/api/v1/workflows/${wfId}`],
      ['DELETE', '/workflows/:id', () => `/api/v1/workflows/${wfId}`],
      ['GET', '/workflows/:id/runs', () => `/api/v1/workflows/${wfId}/runs`],
      ['POST', '/workflows/:id/run', () => `/api/v1/workflows/${wfId}/run`],
      ['GET', '/workflows/runs/:runId/status', () => `/api/v1/workflows/runs/${runId}/status`],
      ['POST', '/workflows/runs/:runId/cancel', () => `/api/v1/workflows/runs/${runId}/cancel`],
      ['POST', '/workflows/runs/:runId/approve', () => `/api/v1/workflows/runs/${runId}/approve`],
    ])('%s %s', async (method, _label, path) => {
      const body =
        method === 'PATCH'
          ? { name: 'stolen' }
          : method === 'POST' && path().endsWith('approve')
            ? { step_id: 'shape', approved: true }
            : {};
      const req = api.http[method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](path()).set(bob.auth);
      const res = method === 'GET' || method === 'DELETE' ? await req : await req.send(body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ data: null, error: expect.any(String) });
      // ...and the resource is untouched for its owner.
      expect((await api.http.get(`/api/v1/workflows/${wfId}`).set(alice.auth)).body.data.name).toBe('simple');
    });

    it("does not list A's workflows for B", async () => {
      const res = await api.http.get('/api/v1/workflows').set(bob.auth);
      expect(res.body.data.map((w: { id: string }) => w.id)).not.toContain(wfId);
    });

    it("lists a workflow's runs newest first for its owner", async () => {
      const second = await api.http.post(`/api/v1/workflows/${wfId}/run`).set(alice.auth).send({});
      const res = await api.http.get(`/api/v1/workflows/${wfId}/runs`).set(alice.auth);
      expect(res.status).toBe(200);
      expect(res.body.data.map((r: { run_id: string }) => r.run_id).slice(0, 2)).toEqual([
        second.body.data.run_id,
        runId,
      ]);
    });
  });

  describe('starting runs', () => {
    it('answers 202 with run_id, workflow_id, status and status_url, and records a queued run', async () => {
      const wf = await createWorkflow(api, alice, simple());
      const res = await api.http
        .post(`/api/v1/workflows/${wf}/run`)
        .set(alice.auth)
        .send({ input: { a: 1 } });
      expect(res.status).toBe(202);
      const { run_id, workflow_id, status, status_url } = res.body.data;
      expect(run_id).toMatch(/^run_/);
      expect(workflow_id).toBe(wf);
      expect(status).toBe('queued');
      expect(status_url).toBe(`http://stepwise.test/api/v1/workflows/runs/${run_id}/status`);
      const st = await api.http.get(`/api/v1/workflows/runs/${run_id}/status`).set(alice.auth);
      expect(st.status).toBe(200);
      expect(st.body.data).toMatchObject({ run_id, workflow_id: wf, status: 'queued', input: { a: 1 } });
      expect(st.body.data.temporal).toMatchObject({ namespace: 'default', workflow_id: run_id });
      expect(st.body.data.temporal.ui_url).toContain(`/namespaces/default/workflows/${run_id}`);
      // The Temporal execution exists when the start is answered, with the search attributes that find it in the Web
      // UI. Its run id is left to the worker's first write of the run (no worker here).
      const described = await api.temporal.workflow.getHandle(run_id).describe();
      expect(described.searchAttributes).toMatchObject({
        StepwiseWorkflowId: [wf],
        StepwiseOwnerId: [alice.id],
        StepwiseWorkflowName: ['simple'],
      });
      expect(described.runId).toEqual(expect.any(String));
      expect((await runsCollection(api.database.db).findOne({ _id: run_id }))?.temporal.run_id).toBeNull();
      // The Web UI's list shows the workflow's name, not only `runWorkflow` and the run id.
      expect(await described.staticSummary()).toBe('simple');
    });

    it('validates the input against config.input_schema, naming the field', async () => {
      const wf = await createWorkflow(api, alice, {
        ...simple(),
        config: {
          input_schema: {
            type: 'object',
            required: ['email'],
            properties: { email: { type: 'string' }, n: { type: 'integer' } },
          },
        },
      });
      const res = await api.http
        .post(`/api/v1/workflows/${wf}/run`)
        .set(alice.auth)
        .send({ input: { n: 'two' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('input.email: required');
      expect(res.body.error).toContain('input.n');
    });

    it('same Idempotency-Key and body → same run and body; different body → 422', async () => {
      const wf = await createWorkflow(api, alice, simple());
      const send = (input: object) =>
        api.http.post(`/api/v1/workflows/${wf}/run`).set(alice.auth).set('Idempotency-Key', 'key-1').send({ input });
      const first = await send({ x: 1, y: 2 });
      expect(first.status).toBe(202);
      const again = await send({ y: 2, x: 1 });
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      const other = await send({ x: 2 });
      expect(other.status).toBe(422);
      // The key is per user: Bob's identical key is his own.
      const bobWf = await createWorkflow(api, bob, {
        name: 'b',
        steps: [
          {
            id: 's',
            template_id: (
              await insertTemplate(api.database.db, bob.id, { step_type: 'action', action_type: 'transform' })
            )._id,
            config: { expression: '1' },
          },
        ],
      });
      const bobs = await api.http
        .post(`/api/v1/workflows/${bobWf}/run`)
        .set(bob.auth)
        .set('Idempotency-Key', 'key-1')
        .send({});
      expect(bobs.status).toBe(202);
      expect(bobs.body.data.run_id).not.toBe(first.body.data.run_id);
    });

    it('20 concurrent duplicates start exactly one run', async () => {
      const wf = await createWorkflow(api, alice, simple());
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          api.http
            .post(`/api/v1/workflows/${wf}/run`)
            .set(alice.auth)
            .set('Idempotency-Key', 'burst')
            .send({ input: { n: 1 } }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      // 202 for the winner and for duplicates that arrive after its start; 409 while it is still in flight.
      expect(statuses.every((s) => s === 202 || s === 409)).toBe(true);
      const runIds = new Set(responses.filter((r) => r.status === 202).map((r) => r.body.data.run_id as string));
      expect(runIds.size).toBe(1);
      const runs = await api.database.db.collection('runs').find({ workflow_id: wf }).toArray();
      expect(runs).toHaveLength(1);
      const after = await api.http
        .post(`/api/v1/workflows/${wf}/run`)
        .set(alice.auth)
        .set('Idempotency-Key', 'burst')
        .send({ input: { n: 1 } });
      expect(after.status).toBe(202);
      expect(after.body.data.run_id).toBe([...runIds][0]);
      const executions = [];
      for await (const e of api.temporal.workflow.list({ query: `StepwiseWorkflowId = "${wf}"` }))
        executions.push(e.workflowId);
      expect(executions.length).toBeLessThanOrEqual(1); // visibility is eventually consistent; never more than one
    });

    it('refuses (422) to start a workflow whose template was deleted since, naming the step', async () => {
      const doomed = await insertTemplate(api.database.db, alice.id, { step_type: 'action', action_type: 'transform' });
      const wf = await createWorkflow(api, alice, {
        name: 'orphan',
        steps: [{ id: 'gone', template_id: doomed._id, config: { expression: '1' } }],
      });
      await api.database.db.collection('agent_templates').deleteOne({ _id: doomed._id as never });
      const res = await api.http.post(`/api/v1/workflows/${wf}/run`).set(alice.auth).send({});
      expect(res.status).toBe(422);
      expect(res.body.error).toContain('step "gone"');
      expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(0);
    });

    it('runs is a fixed word: /workflows/runs/... never reaches :id', async () => {
      const res = await api.http.get('/api/v1/workflows/runs/run_doesnotexist1/status').set(alice.auth);
      expect(res.status).toBe(404);
      expect(res.body.error).toContain('run run_doesnotexist1 not found');
    });
  });

  describe('Temporal unreachable', () => {
    it('answers 503 and leaves no run record', async () => {
      const down = await startTestApi(testConfig({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
      try {
        const user = await createTestUser(down.database.db);
        const t = await insertTemplate(down.database.db, user.id, { step_type: 'action', action_type: 'transform' });
        const wf = await createWorkflow(down, user, {
          name: 'x',
          steps: [{ id: 'a', template_id: t._id, config: { expression: '1' } }],
        });
        const res = await down.http
          .post(`/api/v1/workflows/${wf}/run`)
          .set(user.auth)
          .set('Idempotency-Key', 'k')
          .send({});
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ data: null, error: expect.stringContaining('Temporal') });
        expect(await down.database.db.collection('runs').countDocuments({})).toBe(0);
        expect(await down.database.db.collection('idempotency_keys').countDocuments({})).toBe(0);
      } finally {
        await down.close();
      }
    });
  });
});
