/** Seeding of system templates: valid by the API's own rules, idempotent, safe when API processes start together. */
import { templateRuleProblems } from '../../api/schemas/agent-rules';
import { createTemplateBody } from '../../api/schemas/agents';
import type { Database } from '../../db/client';
import { seedSystemTemplates, SYSTEM_TEMPLATES } from '../../db/system-templates';
import { templatesCollection } from '../../db/templates';
import { workflowsCollection, type WorkflowDoc } from '../../db/workflows';
import { isId } from '../../db/ids';
import { validateActionConfig } from '../../domain/actions/catalog';
import { openTestDb, testConfig } from '../helpers/stack';

let database: Database;
beforeAll(async () => {
  database = await openTestDb(testConfig());
});
afterAll(async () => {
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
});
beforeEach(() => templatesCollection(database.db).deleteMany({}));

it.each(SYSTEM_TEMPLATES.map((t) => [t.system_key, t] as const))(
  '%s passes the same checks as a user template',
  (_key, t) => {
    const parsed = createTemplateBody.safeParse(t.content);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect(templateRuleProblems(t.content)).toEqual([]);
  },
);

it('has unique keys, names and stable ids of the id shape', () => {
  expect(new Set(SYSTEM_TEMPLATES.map((t) => t.id)).size).toBe(SYSTEM_TEMPLATES.length);
  for (const t of SYSTEM_TEMPLATES) expect(isId('tpl', t.id)).toBe(true);
  expect(new Set(SYSTEM_TEMPLATES.map((t) => t.system_key)).size).toBe(SYSTEM_TEMPLATES.length);
  expect(new Set(SYSTEM_TEMPLATES.map((t) => t.content.name)).size).toBe(SYSTEM_TEMPLATES.length);
});

it('is idempotent: a second start inserts and changes nothing, ids stay stable', async () => {
  expect(await seedSystemTemplates(database.db)).toEqual({
    inserted: SYSTEM_TEMPLATES.length,
    updated: 0,
    migrated: 0,
  });
  const before = await templatesCollection(database.db).find().sort({ _id: 1 }).toArray();
  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: 0, updated: 0, migrated: 0 });
  const after = await templatesCollection(database.db).find().sort({ _id: 1 }).toArray();
  expect(after).toEqual(before);
  for (const doc of after) expect(doc).toMatchObject({ system: true, owner_id: null });
});

it('rewrites a template whose content changed, keeping its id', async () => {
  await seedSystemTemplates(database.db);
  const [first, ...rest] = SYSTEM_TEMPLATES;
  const original = await templatesCollection(database.db).findOne({ system_key: first!.system_key });
  const changed = [{ ...first!, content: { ...first!.content, default_prompt: 'A better prompt.' } }, ...rest];
  expect(await seedSystemTemplates(database.db, changed)).toEqual({ inserted: 0, updated: 1, migrated: 0 });
  const updated = await templatesCollection(database.db).findOne({ system_key: first!.system_key });
  expect(updated).toMatchObject({
    _id: original!._id,
    default_prompt: 'A better prompt.',
    created_at: original!.created_at,
  });
});

it('leaves exactly one copy of each when several processes seed at once', async () => {
  await Promise.all([
    seedSystemTemplates(database.db),
    seedSystemTemplates(database.db),
    seedSystemTemplates(database.db),
  ]);
  for (const t of SYSTEM_TEMPLATES) {
    expect(await templatesCollection(database.db).countDocuments({ system_key: t.system_key })).toBe(1);
  }
});

it('stores every system template under its stable id, the same on every database', async () => {
  await seedSystemTemplates(database.db);
  const stored = await templatesCollection(database.db).find({ system: true }).toArray();
  expect(stored.map((d) => d._id).sort()).toEqual(SYSTEM_TEMPLATES.map((t) => t.id).sort());
});

it('moves templates seeded under random ids to their stable ids, and the workflows that named them', async () => {
  const [first, second] = SYSTEM_TEMPLATES;
  const now = new Date();
  const legacyDoc = (t: typeof first, id: string) => ({
    _id: id,
    owner_id: null,
    system: true,
    system_key: t!.system_key,
    ...t!.content,
    created_at: now,
    updated_at: now,
  });
  await templatesCollection(database.db).insertMany([
    legacyDoc(first, 'tpl_Pf2d04l4nGZov8kC'),
    legacyDoc(second, 'tpl_6XJT7qlhYSf_4n2-'),
  ]);
  const workflow: WorkflowDoc = {
    _id: `wf_legacy${Date.now()}`,
    owner_id: 'usr_someone123',
    name: 'Old',
    description: null,
    steps: [
      { id: 'a', template_id: 'tpl_Pf2d04l4nGZov8kC' },
      { id: 'b', template_id: 'tpl_6XJT7qlhYSf_4n2-' },
      { id: 'c', template_id: 'tpl_Pf2d04l4nGZov8kC' },
      { id: 'd', template_id: 'tpl_owntemplate1' },
    ],
    config: {},
    created_at: now,
    updated_at: now,
  };
  await workflowsCollection(database.db).insertOne(workflow);

  expect(await seedSystemTemplates(database.db)).toEqual({
    inserted: SYSTEM_TEMPLATES.length,
    updated: 0,
    migrated: 2,
  });
  const stored = await templatesCollection(database.db).find({ system: true }).toArray();
  expect(stored.map((d) => d._id).sort()).toEqual(SYSTEM_TEMPLATES.map((t) => t.id).sort());
  const moved = await workflowsCollection(database.db).findOne({ _id: workflow._id });
  expect(moved!.steps.map((s) => s.template_id)).toEqual([first!.id, second!.id, first!.id, 'tpl_owntemplate1']);
  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: 0, updated: 0, migrated: 0 });
  await workflowsCollection(database.db).deleteMany({});
});

it('the HTTP request template sends GET unless the step sets a method, as the action documents', () => {
  const http = SYSTEM_TEMPLATES.find((t) => t.system_key === 'action.http_request')!;
  // What a run does with a step that only sets the url: the template's config, then the step's, then the defaults.
  const checked = validateActionConfig('http_request', { ...http.content.config, url: 'https://example.com/' }, 'run');
  expect(checked).toMatchObject({ ok: true, value: { method: 'GET' } });
});

it('a config default a system template changes is kept by the workflows that relied on it', async () => {
  const http = SYSTEM_TEMPLATES.find((t) => t.system_key === 'action.http_request')!;
  const before = SYSTEM_TEMPLATES.map((t) =>
    t === http ? { ...t, content: { ...t.content, config: { ...t.content.config, method: 'POST' } } } : t,
  );
  await seedSystemTemplates(database.db, before);
  const now = new Date();
  const workflow: WorkflowDoc = {
    _id: `wf_pinned${Date.now()}`,
    owner_id: 'usr_someone123',
    name: 'Posts',
    description: null,
    steps: [
      { id: 'relied', template_id: http.id, config: { body: { a: 1 } } },
      { id: 'unset', template_id: http.id },
      { id: 'own', template_id: http.id, config: { method: 'PUT' } },
      { id: 'other', template_id: 'tpl_owntemplate1' },
    ],
    config: {},
    created_at: now,
    updated_at: now,
  };
  await workflowsCollection(database.db).insertOne(workflow);

  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: 0, updated: 1, migrated: 0 });
  const stored = await templatesCollection(database.db).findOne({ _id: http.id });
  expect(stored!.config).toEqual(http.content.config);
  const pinned = await workflowsCollection(database.db).findOne({ _id: workflow._id });
  expect(pinned!.steps.map((s) => s.config)).toEqual([
    { body: { a: 1 }, method: 'POST' },
    { method: 'POST' },
    { method: 'PUT' },
    undefined,
  ]);
  // Once: the next start finds the template current and changes nothing.
  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: 0, updated: 0, migrated: 0 });
  await workflowsCollection(database.db).deleteMany({});
});
