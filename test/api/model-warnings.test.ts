/**
 * Writes that name a model whose provider is not configured are accepted with a warning in `data.warnings` (docs/
 * decisions/0050-model-warnings-on-writes.md): a run of them would fail with llm_not_configured, and the person
 * writing should hear it now rather than from a failed run. The bodies conform to the OpenAPI document.
 */
import { agentBody } from '../helpers/api';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

interface Warning {
  code: string;
  field: string;
  message: string;
}

describe('model warnings on template and workflow writes', () => {
  let api: TestApi;
  let user: TestUser;
  const openapi = openApiChecker();

  // No OPENAI_API_KEY or ANTHROPIC_API_KEY; a local OpenAI-compatible server is configured (nothing listens there:
  // the check is of the configuration, never a call).
  beforeAll(async () => {
    api = await startTestApi(testConfig({ LLM_BASE_URL: 'http://127.0.0.1:9/v1' }));
    user = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const warningsOf = (body: { data: { warnings?: Warning[] } }) => body.data.warnings ?? [];

  it('warns on a template whose model (or the default one) has no configured provider, and stores it', async () => {
    const byDefault = await api.http.post('/api/v1/agents').set(user.auth).send(agentBody());
    expect(byDefault.status).toBe(201);
    openapi.check(byDefault);
    expect(warningsOf(byDefault.body)).toEqual([
      {
        code: 'model_provider_not_configured',
        field: 'model',
        message: expect.stringContaining(
          'model: openai:gpt-4o-mini (the default model, LLM_DEFAULT_MODEL) needs OPENAI_API_KEY',
        ),
      },
    ]);
    const stored = await api.http.get(`/api/v1/agents/${byDefault.body.data.id}`).set(user.auth);
    expect(stored.body.data.warnings).toBeUndefined();

    const anthropic = await api.http
      .post('/api/v1/agents?dry_run=true')
      .set(user.auth)
      .send(agentBody({ model: 'anthropic:claude-x' }));
    expect(anthropic.status).toBe(200);
    openapi.check(anthropic);
    expect(warningsOf(anthropic.body)[0]?.message).toContain('anthropic:claude-x needs ANTHROPIC_API_KEY');

    const local = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send(agentBody({ model: 'compat:llama3.2' }));
    expect(local.status).toBe(201);
    expect(local.body.data.warnings).toBeUndefined();

    const patched = await api.http
      .patch(`/api/v1/agents/${local.body.data.id}`)
      .set(user.auth)
      .send({ model: 'openai:gpt-4o' });
    expect(patched.status).toBe(200);
    openapi.check(patched);
    expect(warningsOf(patched.body)[0]).toMatchObject({ code: 'model_provider_not_configured', field: 'model' });

    const action = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: 'Shape', default_prompt: 'x', step_type: 'action', action_type: 'transform', config: {} });
    expect(action.status).toBe(201);
    expect(action.body.data.warnings).toBeUndefined();
  });

  it("warns on a workflow's agent steps by the model each would run with, naming the step", async () => {
    const local = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send(agentBody({ model: 'compat:llama3.2' }));
    const byDefault = await api.http.post('/api/v1/agents').set(user.auth).send(agentBody());
    const res = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: 'three agents',
        steps: [
          { id: 'fine', template_id: local.body.data.id, input: 'x' },
          { id: 'default', template_id: byDefault.body.data.id, input: 'x' },
          { id: 'named', template_id: local.body.data.id, model: 'anthropic:claude-x', input: 'x' },
          { id: 'shape', template: 'Transform data', config: { expression: '$' } },
        ],
      });
    expect(res.status).toBe(201);
    openapi.check(res);
    expect(warningsOf(res.body).map((w) => [w.code, w.field])).toEqual([
      ['model_provider_not_configured', 'steps[1].model'],
      ['model_provider_not_configured', 'steps[2].model'],
    ]);
    expect(warningsOf(res.body)[0]!.message).toContain('default');
    expect(warningsOf(res.body)[1]!.message).toContain('ANTHROPIC_API_KEY');

    const fixed = await api.http
      .patch(`/api/v1/workflows/${res.body.data.id}`)
      .set(user.auth)
      .send({ steps: [{ id: 'fine', template_id: local.body.data.id, input: 'x' }] });
    expect(fixed.status).toBe(200);
    openapi.check(fixed);
    expect(fixed.body.data.warnings).toBeUndefined();
  });
});
