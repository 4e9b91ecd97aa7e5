/** `?dry_run=true` on workflow and template writes: the same checks and answers, and nothing is stored. */
import { SYSTEM_TEMPLATES } from '../../db/system-templates';
import { templatesCollection } from '../../db/templates';
import { workflowsCollection } from '../../db/workflows';
import { agentBody, expectError } from '../helpers/api';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

const transform = SYSTEM_TEMPLATES.find((t) => t.system_key === 'action.transform')!;
const workflow = { name: 'dry', steps: [{ id: 'shape', template: 'Transform data', config: { expression: '$' } }] };

describe('dry runs of definition writes', () => {
  let api: TestApi;
  let alice: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    alice = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const stored = () => workflowsCollection(api.database.db).countDocuments({ owner_id: alice.id });
  const ownTemplates = () => templatesCollection(api.database.db).countDocuments({ owner_id: alice.id });

  it('checks a new workflow and answers what would be stored, writing nothing', async () => {
    const res = await api.http.post('/api/v1/workflows?dry_run=true').set(alice.auth).send(workflow);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'dry', steps: [{ id: 'shape', template_id: transform.id }] });
    expect(await stored()).toBe(0);

    const bad = { ...workflow, steps: [{ id: 'shape', template: 'Transform data', config: { expression: 1 } }] };
    expectError(
      await api.http.post('/api/v1/workflows?dry_run=true').set(alice.auth).send(bad),
      400,
      'steps[0] (shape)',
    );
    expect(await stored()).toBe(0);
  });

  it('checks a change of a workflow without applying it', async () => {
    const created = await api.http.post('/api/v1/workflows').set(alice.auth).send(workflow);
    const id = created.body.data.id as string;
    const res = await api.http.patch(`/api/v1/workflows/${id}?dry_run=true`).set(alice.auth).send({ name: 'renamed' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, name: 'renamed' });
    expect((await api.http.get(`/api/v1/workflows/${id}`).set(alice.auth)).body.data.name).toBe('dry');
  });

  it('checks templates the same way', async () => {
    const res = await api.http
      .post('/api/v1/agents?dry_run=true')
      .set(alice.auth)
      .send(agentBody({ name: 'Dry' }));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Dry', system: false });
    expect(await ownTemplates()).toBe(0);
    const bad = agentBody({ default_tools: ['no_such_tool'] });
    expectError(await api.http.post('/api/v1/agents?dry_run=true').set(alice.auth).send(bad), 400, 'default_tools[0]');

    const made = await api.http
      .post('/api/v1/agents')
      .set(alice.auth)
      .send(agentBody({ name: 'Real' }));
    const id = made.body.data.id as string;
    const change = await api.http.patch(`/api/v1/agents/${id}?dry_run=true`).set(alice.auth).send({ name: 'Changed' });
    expect(change.status).toBe(200);
    expect(change.body.data.name).toBe('Changed');
    expect((await api.http.get(`/api/v1/agents/${id}`).set(alice.auth)).body.data.name).toBe('Real');
  });
});
