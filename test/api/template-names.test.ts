/**
 * Portable definitions: system templates have the same id on every database, and a step may name its template
 * (`template: "…"`), resolved when the workflow is written: your own template of that name first, then the system one;
 * an unknown or ambiguous name is a 400 naming the step.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_TEMPLATES } from '../../db/system-templates';
import { expectError, agentBody } from '../helpers/api';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

const transform = SYSTEM_TEMPLATES.find((t) => t.system_key === 'action.transform')!;

describe('templates by stable id and by name', () => {
  let api: TestApi;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    alice = await createTestUser(api.database.db);
    bob = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  it("the README's table of system templates gives every stable id with its name", () => {
    const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
    for (const t of SYSTEM_TEMPLATES) expect(readme).toContain(`| \`${t.id}\` | ${t.content.name} |`);
  });

  it('lists every system template under its documented stable id', async () => {
    const res = await api.http.get('/api/v1/agents?limit=200').set(alice.auth);
    const system = (res.body.data as { id: string; system: boolean }[]).filter((t) => t.system).map((t) => t.id);
    expect(system.sort()).toEqual(SYSTEM_TEMPLATES.map((t) => t.id).sort());
  });

  it('resolves a system template by name, keeps the name and gives back the id it resolved to', async () => {
    const created = await api.http
      .post('/api/v1/workflows')
      .set(alice.auth)
      .send({ name: 'by name', steps: [{ id: 'shape', template: 'Transform data', config: { expression: '$' } }] });
    expect(created.status).toBe(201);
    expect(created.body.data.steps[0]).toMatchObject({ template: 'Transform data', template_id: transform.id });

    // The fetched definition can be sent back as it is: `template` wins over the id it resolved to.
    const { id, steps } = created.body.data as { id: string; steps: unknown[] };
    const back = await api.http.patch(`/api/v1/workflows/${id}`).set(alice.auth).send({ steps });
    expect(back.status).toBe(200);
    expect(back.body.data.steps).toEqual(steps);
  });

  it("prefers the caller's own template of that name, and never sees another user's", async () => {
    const own = await api.http
      .post('/api/v1/agents')
      .set(alice.auth)
      .send(agentBody({ name: 'Transform data' }));
    expect(own.status).toBe(201);
    const step = { id: 'ask', template: 'Transform data' };
    const mine = await api.http
      .post('/api/v1/workflows')
      .set(alice.auth)
      .send({ name: 'own', steps: [step] });
    expect(mine.status).toBe(201);
    expect(mine.body.data.steps[0].template_id).toBe(own.body.data.id);
    const theirs = await api.http
      .post('/api/v1/workflows')
      .set(bob.auth)
      .send({ name: 'system', steps: [{ ...step, config: { expression: '$' } }] });
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.steps[0].template_id).toBe(transform.id);
  });

  it('refuses an unknown or ambiguous name, naming the step and the field', async () => {
    const unknown = await api.http
      .post('/api/v1/workflows')
      .set(bob.auth)
      .send({ name: 'x', steps: [{ id: 'first', template: 'No such template' }] });
    expectError(unknown, 400, 'steps[0] (first).template', 'no template named "No such template"');

    for (let i = 0; i < 2; i++) {
      const made = await api.http
        .post('/api/v1/agents')
        .set(bob.auth)
        .send(agentBody({ name: 'Twin' }));
      expect(made.status).toBe(201);
    }
    const twin = await api.http
      .post('/api/v1/workflows')
      .set(bob.auth)
      .send({
        name: 'x',
        steps: [
          { id: 'first', template_id: transform.id, config: { expression: '$' } },
          { id: 'second', template: 'Twin' },
        ],
      });
    expectError(twin, 400, 'steps[1] (second).template', '2 of your templates are named "Twin"');
  });
});
