/**
 * The start's first read (db/workflow-with-templates.ts) against the real MongoDB wire server: the owner's workflow
 * with the templates its steps name, in one command; system and own templates only, each once; another owner's
 * workflow is not found.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { findWorkflowWithTemplates } from '../../db/workflow-with-templates';
import { insertWorkflow, type WorkflowDoc } from '../../db/workflows';
import { insertTemplate } from '../helpers/workflows';
import { testConfig, uniqueId, useTestDb } from '../helpers/stack';

describe('findWorkflowWithTemplates', () => {
  const database = useTestDb();
  let monitored: MongoClient;
  const commands: CommandStartedEvent[] = [];
  beforeAll(async () => {
    monitored = new MongoClient(testConfig().MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => commands.push(e));
    await monitored.connect();
  });
  afterAll(() => monitored?.close());

  it("reads the workflow and its steps' visible templates in one command", async () => {
    const owner = uniqueId('usr_');
    const db = database.db;
    const own = await insertTemplate(db, owner, { step_type: 'action', action_type: 'transform' });
    const system = await insertTemplate(db, null, { step_type: 'action', action_type: 'transform' });
    const others = await insertTemplate(db, uniqueId('usr_'), { step_type: 'action', action_type: 'transform' });
    const now = new Date();
    const workflow: WorkflowDoc = {
      _id: uniqueId('wf_'),
      owner_id: owner,
      name: 'w',
      description: null,
      steps: [own, system, own, others].map((t, i) => ({ id: `s${i}`, template_id: t._id })),
      config: { input_schema: { type: 'object', properties: { $odd: { type: 'string' } } } },
      created_at: now,
      updated_at: now,
    };
    await insertWorkflow(db, workflow);

    commands.length = 0;
    const found = await findWorkflowWithTemplates(monitored.db(db.databaseName), owner, workflow._id);
    expect(commands.map((c) => c.commandName)).toEqual(['aggregate']);
    expect(found?.workflow).toEqual(workflow);
    expect([...found!.templates.keys()].sort()).toEqual([own._id, system._id].sort());
    expect(await findWorkflowWithTemplates(db, uniqueId('usr_'), workflow._id)).toBeNull();
  });
});
