/** Seeding of system templates: valid by the API's own rules, idempotent, safe when API processes start together. */
import { templateRuleProblems } from '../../api/routes/agents.rules';
import { createTemplateBody } from '../../api/routes/agents.schema';
import type { Database } from '../../db/client';
import { seedSystemTemplates, SYSTEM_TEMPLATES } from '../../db/system-templates';
import { templatesCollection } from '../../db/templates';
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

it('has unique keys and names', () => {
  expect(new Set(SYSTEM_TEMPLATES.map((t) => t.system_key)).size).toBe(SYSTEM_TEMPLATES.length);
  expect(new Set(SYSTEM_TEMPLATES.map((t) => t.content.name)).size).toBe(SYSTEM_TEMPLATES.length);
});

it('is idempotent: a second start inserts and changes nothing, ids stay stable', async () => {
  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: SYSTEM_TEMPLATES.length, updated: 0 });
  const before = await templatesCollection(database.db).find().sort({ _id: 1 }).toArray();
  expect(await seedSystemTemplates(database.db)).toEqual({ inserted: 0, updated: 0 });
  const after = await templatesCollection(database.db).find().sort({ _id: 1 }).toArray();
  expect(after).toEqual(before);
  for (const doc of after) expect(doc).toMatchObject({ system: true, owner_id: null });
});

it('rewrites a template whose content changed, keeping its id', async () => {
  await seedSystemTemplates(database.db);
  const [first, ...rest] = SYSTEM_TEMPLATES;
  const original = await templatesCollection(database.db).findOne({ system_key: first!.system_key });
  const changed = [{ ...first!, content: { ...first!.content, default_prompt: 'A better prompt.' } }, ...rest];
  expect(await seedSystemTemplates(database.db, changed)).toEqual({ inserted: 0, updated: 1 });
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
