/**
 * Budgets at the API: the per-user limit of runs in flight (429 `concurrent_runs_exceeded` with Retry-After, derived
 * from the stored runs, freed when a run ends) on the real stack, and write-time validation of a workflow's
 * `config.budget` against the server's ceiling. Responses are checked against the OpenAPI document.
 */
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const MAX_CONCURRENT = 2;

describe('budgets at the API', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  const checker = openApiChecker();

  beforeAll(async () => {
    api = await startTestApi(
      testConfig({
        USER_MAX_CONCURRENT_RUNS: String(MAX_CONCURRENT),
        RUN_MAX_TOKENS: '5000',
        RUN_MAX_MODEL_CALLS: '20',
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  /** A run of this workflow waits for approval: it stays in flight until it is decided or cancelled. */
  const approvalWorkflow = async (owner: TestUser) => {
    const approval = await insertTemplate(api.database.db, owner.id, { step_type: 'action', action_type: 'approval' });
    return createWorkflow(api, owner, {
      name: 'held open',
      steps: [{ id: 'review', template_id: approval._id, config: { message: 'Go?' } }],
    });
  };

  describe('concurrent runs per user', () => {
    it('refuses a start beyond the limit with 429 and a code, and accepts again once a run has ended', async () => {
      const workflowId = await approvalWorkflow(user);
      // Runs waiting for approval have not ended: they hold their place.
      const held: string[] = [];
      for (let i = 0; i < MAX_CONCURRENT; i++) {
        const runId = await startRun(api, user, workflowId);
        await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
        held.push(runId);
      }
      const runsBefore = await api.database.db.collection('runs').countDocuments({ owner_id: user.id });

      const refused = await api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({});
      checker.check(refused);
      expect(refused.status).toBe(429);
      expect(refused.headers['x-error-code']).toBe('concurrent_runs_exceeded');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toEqual({ data: null, error: expect.stringContaining(`${MAX_CONCURRENT} runs`) });
      // The refused start left no record behind (it would count against the limit itself).
      expect(await api.database.db.collection('runs').countDocuments({ owner_id: user.id })).toBe(runsBefore);

      // Another user is not affected.
      const other = await createTestUser(api.database.db);
      await startRun(api, other, await approvalWorkflow(other));

      const ended = await api.http.post(`/api/v1/workflows/runs/${held[0]}/cancel`).set(user.auth).send({});
      expect(ended.status).toBe(202);
      await waitForStatus(api, user, held[0]!, isTerminal);

      const again = await api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({});
      checker.check(again);
      expect(again.status).toBe(202);
    });

    it('concurrent starts never exceed the limit', async () => {
      const owner = await createTestUser(api.database.db);
      const workflowId = await approvalWorkflow(owner);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => api.http.post(`/api/v1/workflows/${workflowId}/run`).set(owner.auth).send({})),
      );
      const accepted = answers.filter((r) => r.status === 202).length;
      expect(answers.every((r) => r.status === 202 || r.status === 429)).toBe(true);
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThanOrEqual(MAX_CONCURRENT);
      expect(await api.database.db.collection('runs').countDocuments({ owner_id: owner.id })).toBe(accepted);
    });
  });

  describe('config.budget on write', () => {
    const agentStep = async (owner: TestUser) => {
      const res = await api.http.get('/api/v1/agents?limit=100').set(owner.auth);
      const agent = (res.body.data as { id: string; step_type: string }[]).find((t) => t.step_type === 'agent');
      if (!agent) throw new Error('no agent template visible');
      return { id: 'ask', template_id: agent.id, input: 'hi' };
    };

    it.each([
      [{ max_tokens: 0 }, 'config.budget.max_tokens'],
      [{ max_tokens: 1.5 }, 'config.budget.max_tokens'],
      [{ max_model_calls: -1 }, 'config.budget.max_model_calls'],
      [{ max_model_calls: '3' }, 'config.budget.max_model_calls'],
      [{ max_tokens: 10, extra: 1 }, 'config.budget'],
      [{ max_tokens: 5001 }, 'config.budget.max_tokens'],
      [{ max_model_calls: 21 }, 'config.budget.max_model_calls'],
    ])('refuses budget %j with 400 naming %s', async (budget, field) => {
      const body = { name: 'bad budget', steps: [await agentStep(user)], config: { budget } };
      const res = await api.http.post('/api/v1/workflows').set(user.auth).send(body);
      checker.check(res);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(field);
    });

    it('stores a budget within the ceiling, refuses raising it above on PATCH, and snapshots it into runs', async () => {
      const body = { name: 'budgeted', steps: [await agentStep(user)], config: { budget: { max_tokens: 1000 } } };
      const created = await api.http.post('/api/v1/workflows').set(user.auth).send(body);
      checker.check(created);
      expect(created.status).toBe(201);
      expect(created.body.data.config.budget).toEqual({ max_tokens: 1000 });

      const id = created.body.data.id as string;
      const raised = await api.http
        .patch(`/api/v1/workflows/${id}`)
        .set(user.auth)
        .send({ config: { budget: { max_tokens: 9999 } } });
      expect(raised.status).toBe(400);
      expect(raised.body.error).toContain('config.budget.max_tokens: at most 5000');

      // The status shows the run's effective budget: the workflow's tokens, the server's default call limit.
      const owner = await createTestUser(api.database.db);
      const workflowId = await createWorkflow(api, owner, { ...body, steps: [await agentStep(owner)] });
      const runId = await startRun(api, owner, workflowId);
      const status = await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(owner.auth);
      checker.check(status);
      expect(status.body.data.budget).toEqual({
        max_tokens: 1000,
        max_model_calls: 20,
        tokens_used: 0,
        model_calls_used: 0,
      });
      await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(owner.auth).send({});
    });
  });

  it('the OpenAPI document lists the 429 of a run start and the budget of a run', () => {
    const op = checker.document.paths?.['/api/v1/workflows/{id}/run']?.post;
    const tooMany = op?.responses?.['429'] as { description?: string } | undefined;
    expect(tooMany?.description).toContain('concurrent_runs_exceeded');
    expect(JSON.stringify(checker.document.components?.schemas?.RunStatus)).toContain('model_calls_used');
    const config = JSON.stringify(checker.document.components?.schemas ?? {});
    expect(config).toContain('max_model_calls');
  });
});
