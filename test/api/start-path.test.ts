/**
 * The start path reads a workflow and the templates it used last time together (api/commands/template-hints.ts) and
 * records Temporal's run id after answering. Neither may let a start use what is no longer there: an edited workflow
 * starts with its new templates, a deleted template is a 422 naming the step, and the run id does get recorded.
 */
import { runsCollection } from '../../db/runs';
import { templatesCollection } from '../../db/templates';
import { expectError } from '../helpers/api';
import { startTestApi, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';

let api: TestApi;
let user: TestUser;

beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.database.db);
});
afterAll(() => api?.close());

const transformStep = (id: string, templateId: string) => ({
  id,
  template_id: templateId,
  config: { expression: 'data', data: '{{input}}' },
});

async function snapshotTemplates(runId: string): Promise<string[]> {
  const run = await runsCollection(api.database.db).findOne({ _id: runId });
  return run!.snapshot.steps.map((s) => s.template_id ?? '');
}

describe('starting a run after the workflow or its templates changed', () => {
  it('uses the templates the workflow names now, not those of the last start', async () => {
    const a = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const b = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'hinted', steps: [transformStep('s1', a._id)] });
    expect(await snapshotTemplates(await startRun(api, user, workflowId))).toEqual([a._id]);

    const patched = await api.http
      .patch(`/api/v1/workflows/${workflowId}`)
      .set(user.auth)
      .send({ steps: [transformStep('s1', b._id), transformStep('s2', a._id)] });
    expect(patched.status).toBe(200);
    expect(await snapshotTemplates(await startRun(api, user, workflowId))).toEqual([b._id, a._id]);
  });

  it('refuses with 422 naming the step when a template used at the last start was deleted since', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'gone', steps: [transformStep('only', t._id)] });
    await startRun(api, user, workflowId);
    await templatesCollection(api.database.db).deleteOne({ _id: t._id });
    const res = await api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({});
    expectError(res, 422, 'step "only"', t._id);
  });

  it('records the Temporal run id of a started run (written after the answer)', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'confirmed', steps: [transformStep('s', t._id)] });
    const runId = await startRun(api, user, workflowId);
    const described = await api.temporal.workflow.getHandle(runId).describe();
    let recorded: string | null = null;
    for (let i = 0; i < 100 && recorded === null; i++) {
      recorded = (await runsCollection(api.database.db).findOne({ _id: runId }))!.temporal.run_id;
      if (recorded === null) await new Promise((r) => setTimeout(r, 20));
    }
    expect(recorded).toBe(described.runId);
  });
});
