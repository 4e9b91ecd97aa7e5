/**
 * Portable definitions: system templates have the same id on every database, and a step may name its template
 * (`template: "…"`), resolved when the workflow is written: your own template of that name first, then the system one;
 * an unknown name is a 400 naming the step. A name is unique among one owner's templates (409 naming the holder).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_TEMPLATES } from '../../db/system-templates';
import { ensureIndexes, TEMPLATE_NAME_INDEX } from '../../db/indexes';
import { templatesCollection } from '../../db/templates';
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

  it("docs/api.md's table of system templates gives every stable id with its name", () => {
    const doc = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');
    for (const t of SYSTEM_TEMPLATES) expect(doc).toContain(`| \`${t.id}\` | ${t.content.name} |`);
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

  it('refuses an unknown name, naming the step and the field', async () => {
    const unknown = await api.http
      .post('/api/v1/workflows')
      .set(bob.auth)
      .send({ name: 'x', steps: [{ id: 'first', template: 'No such template' }] });
    expectError(unknown, 400, 'steps[0] (first).template', 'no template named "No such template"');
  });
});

describe('template names are unique per owner', () => {
  let api: TestApi;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    alice = await createTestUser(api.database.db);
    bob = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const create = (user: TestUser, name: string, query = '') =>
    api.http.post(`/api/v1/agents${query}`).set(user.auth).send(agentBody({ name }));

  it('a second template of the same name is a 409 naming the one that has it; another user may use it', async () => {
    const first = await create(alice, 'Twin');
    expect(first.status).toBe(201);
    const id = first.body.data.id as string;
    expectError(await create(alice, 'Twin'), 409, 'name: ', '"Twin"', id);
    // Names are trimmed before they are compared, as they are before they are stored.
    expectError(await create(alice, '  Twin '), 409, id);
    // The dry run applies the same rule.
    expectError(await create(alice, 'Twin', '?dry_run=true'), 409, id);
    // Exact names: another case is another name.
    expect((await create(alice, 'twin')).status).toBe(201);
    expect((await create(bob, 'Twin')).status).toBe(201);
    const mine = await api.http.get('/api/v1/agents?limit=200').set(alice.auth);
    const twins = (mine.body.data as { name: string }[]).filter((t) => t.name === 'Twin');
    expect(twins).toHaveLength(1);
  });

  it('a rename onto another of your names is a 409; keeping its own name is not', async () => {
    const a = (await create(alice, 'Alpha')).body.data as { id: string };
    const b = (await create(alice, 'Beta')).body.data as { id: string };
    const clash = await api.http.patch(`/api/v1/agents/${b.id}`).set(alice.auth).send({ name: 'Alpha' });
    expectError(clash, 409, 'name: ', '"Alpha"', a.id);
    const dry = await api.http.patch(`/api/v1/agents/${b.id}?dry_run=true`).set(alice.auth).send({ name: 'Alpha' });
    expectError(dry, 409, a.id);
    const same = await api.http
      .patch(`/api/v1/agents/${a.id}`)
      .set(alice.auth)
      .send({ name: 'Alpha', tags: ['x'] });
    expect(same.status).toBe(200);
    const stored = await api.http.get(`/api/v1/agents/${b.id}`).set(alice.auth);
    expect(stored.body.data.name).toBe('Beta');
  });

  it('creates racing for one name: exactly one is stored, every other is a 409 naming it', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(alice, 'Racer')));
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0]!.body.data.id as string;
    for (const r of answers.filter((x) => x.status !== 201)) expectError(r, 409, id);
    const stored = await templatesCollection(api.database.db).countDocuments({ owner_id: alice.id, name: 'Racer' });
    expect(stored).toBe(1);
  });

  it("a user template may have the name of a system template (its owner's own wins when a step names it)", async () => {
    expect((await create(bob, 'Summarizer')).status).toBe(201);
    expect((await create(bob, 'Summarizer')).status).toBe(409);
  });
});

describe('a database that already holds two templates of one name (stored before names were unique)', () => {
  let api: TestApi;
  let carol: TestUser;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    carol = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  it('starts, reports them, refuses new ones and names the ambiguity until one is renamed', async () => {
    const db = api.database.db;
    // As such a database is before this start: the name index cannot exist while the duplicates do.
    await templatesCollection(db).dropIndex(TEMPLATE_NAME_INDEX.name!);
    const first = await api.http
      .post('/api/v1/agents')
      .set(carol.auth)
      .send(agentBody({ name: 'Old twin' }));
    const copy = {
      ...(await templatesCollection(db).findOne({ _id: first.body.data.id }))!,
      _id: 'tpl_oldtwin0000002',
    };
    await templatesCollection(db).insertOne(copy);

    const report = await ensureIndexes(db);
    expect(report.duplicateTemplateNames).toEqual([
      { owner_id: carol.id, name: 'Old twin', ids: [first.body.data.id, copy._id].sort() },
    ]);
    const names = (await templatesCollection(db).indexes()).map((i) => i.name);
    expect(names).not.toContain(TEMPLATE_NAME_INDEX.name);
    expect(names).toContain('by_owner_created');

    // Without the index the write path still refuses a third, and a step naming them is told which to rename.
    expectError(
      await api.http
        .post('/api/v1/agents')
        .set(carol.auth)
        .send(agentBody({ name: 'Old twin' })),
      409,
      'Old twin',
    );
    const step = await api.http
      .post('/api/v1/workflows')
      .set(carol.auth)
      .send({ name: 'x', steps: [{ id: 'first', template: 'Old twin' }] });
    expectError(step, 400, 'steps[0] (first).template', '2 of your templates are named "Old twin"');

    const renamed = await api.http.patch(`/api/v1/agents/${copy._id}`).set(carol.auth).send({ name: 'Old twin 2' });
    expect(renamed.status).toBe(200);
    expect((await ensureIndexes(db)).duplicateTemplateNames).toEqual([]);
    expect((await templatesCollection(db).indexes()).map((i) => i.name)).toContain(TEMPLATE_NAME_INDEX.name);
  });
});
