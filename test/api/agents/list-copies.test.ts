/**
 * `GET /agents` answers from copies filed under the template versions (api/commands/template-lists.ts), against the
 * real database: a copy is used while nothing changed, every write through the repository shows at once in every
 * process's next list, and a write that bypassed the versions shows within the copies' time limit.
 */
import { COPY_TTL_MS, TemplateLists } from '../../../api/commands/template-lists';
import type { Database } from '../../../db/client';
import { seedSystemTemplates, SYSTEM_TEMPLATES } from '../../../db/system-templates';
import {
  createTemplate,
  deleteOwnTemplate,
  templatesCollection,
  updateOwnTemplate,
  type TemplateContent,
} from '../../../db/templates';
import { newId } from '../../../db/ids';
import { openTestDb, testConfig } from '../../helpers/stack';

let database: Database;
beforeAll(async () => {
  database = await openTestDb(testConfig());
  await seedSystemTemplates(database.db);
});
afterAll(async () => {
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
});

const content = (name: string): TemplateContent => ({
  name,
  default_prompt: 'Say hi.',
  default_tools: [],
  default_tasks: [],
  tags: ['copies'],
  short_description: null,
  step_type: 'agent',
  action_type: null,
  model: null,
  config: {},
  max_turns: null,
  output_schema: null,
});

/** The names on the owner's first page of templates tagged `copies`. */
async function names(lists: TemplateLists, owner: string): Promise<string[]> {
  return (await lists.list(owner, { tag: 'copies', limit: 50 })).items.map((t) => t.name);
}

/** Two API processes (each with its own copies) and a clock the test moves. */
function processes() {
  let now = 1_000_000;
  const clock = () => now;
  return {
    a: new TemplateLists(database.db, clock),
    b: new TemplateLists(database.db, clock),
    advance: (ms: number) => (now += ms),
  };
}

describe('template list copies', () => {
  it('shows every write through the repository in the next list of every process', async () => {
    const owner = newId('usr');
    const { a, b } = processes();
    expect(await names(a, owner)).toEqual([]);
    expect(await names(b, owner)).toEqual([]);
    const t = await createTemplate(database.db, owner, content('first'));
    expect(await names(a, owner)).toEqual(['first']);
    expect(await names(b, owner)).toEqual(['first']);
    await updateOwnTemplate(database.db, owner, t._id, { name: 'renamed' });
    expect(await names(b, owner)).toEqual(['renamed']);
    expect(await names(a, owner)).toEqual(['renamed']);
    await deleteOwnTemplate(database.db, owner, t._id);
    expect(await names(a, owner)).toEqual([]);
    expect(await names(b, owner)).toEqual([]);
  });

  it("keeps one owner's copies when another owner writes", async () => {
    const [one, two] = [newId('usr'), newId('usr')];
    const { a } = processes();
    await createTemplate(database.db, one, content('mine'));
    const first = await a.list(one, { tag: 'copies', limit: 50 });
    await createTemplate(database.db, two, content('theirs'));
    expect(await a.list(one, { tag: 'copies', limit: 50 })).toBe(first);
    expect(await names(a, two)).toEqual(['theirs']);
  });

  it('answers from its copy while nothing changed, and reads again after the time limit', async () => {
    const owner = newId('usr');
    const { a, advance } = processes();
    await createTemplate(database.db, owner, content('listed'));
    expect(await names(a, owner)).toEqual(['listed']);
    // Written past the repository (as by hand, or by a process that died before its bump): the copy stays in use…
    const now = new Date();
    await templatesCollection(database.db).insertOne({
      _id: newId('tpl'),
      owner_id: owner,
      system: false,
      ...content('unannounced'),
      created_at: now,
      updated_at: now,
    });
    expect(await names(a, owner)).toEqual(['listed']);
    advance(COPY_TTL_MS - 1);
    expect(await names(a, owner)).toEqual(['listed']);
    // …for no longer than the time limit.
    advance(1);
    expect(await names(a, owner)).toEqual(['listed', 'unannounced']);
  });

  it('shows a change of the system templates, seeded by another process, at once', async () => {
    const owner = newId('usr');
    const { a } = processes();
    const ids = (await a.list(owner, { limit: 200 })).items.filter((t) => t.system).map((t) => t.id);
    expect(ids.length).toBe(SYSTEM_TEMPLATES.length);
    const [first, ...rest] = SYSTEM_TEMPLATES;
    await seedSystemTemplates(database.db, [
      { ...first!, content: { ...first!.content, short_description: 'changed by a newer release' } },
      ...rest,
    ]);
    const changed = (await a.list(owner, { limit: 200 })).items.find((t) => t.id === first!.id);
    expect(changed?.short_description).toBe('changed by a newer release');
    await seedSystemTemplates(database.db);
  });
});
