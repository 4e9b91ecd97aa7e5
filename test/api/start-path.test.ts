/**
 * The one start path (api/commands/start-run.ts) reads the workflow and its templates as stored at each start: an edit
 * made since — through this process or another — is in the next run's snapshot, a deleted workflow is a 404 and a
 * deleted template a 422 naming the step, with no run left recorded; and a start is answered once Temporal has the
 * run, its Temporal run id recorded.
 */
import { runsCollection } from '../../db/runs';
import { templatesCollection } from '../../db/templates';
import { workflowsCollection } from '../../db/workflows';
import type { ActionStepSnapshot, WorkflowStepSnapshot } from '../../domain/run';
import { expectError } from '../helpers/api';
import { startTestApi, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';

let api: TestApi;
/** A second API process on the same database: edits made through it are unknown to the first. */
let other: TestApi;
let user: TestUser;

beforeAll(async () => {
  api = await startTestApi();
  other = await startTestApi(api.config);
  user = await createTestUser(api.database.db);
});
afterAll(async () => {
  await other?.close();
  await api?.close();
});

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

  it('answers once Temporal has the run, leaving its Temporal run id to the worker', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'confirmed', steps: [transformStep('s', t._id)] });
    const runId = await startRun(api, user, workflowId);
    const recorded = (await runsCollection(api.database.db).findOne({ _id: runId }))!.temporal.run_id;
    const described = await api.temporal.workflow.getHandle(runId).describe();
    expect(described.runId).toEqual(expect.any(String));
    // No write after the start: the worker's first write of the run records it (test/temporal/graphs/graph-runs).
    expect(recorded).toBeNull();
  });
});

describe('starting a workflow after a change made through another API process', () => {
  const runsOf = (workflowId: string) => runsCollection(api.database.db).countDocuments({ workflow_id: workflowId });
  const stepsOf = async (runId: string) =>
    (await runsCollection(api.database.db).findOne({ _id: runId }))!.snapshot.steps;

  it('uses the workflow as edited through another API process', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'edited', steps: [transformStep('s1', t._id)] });
    await startRun(api, user, workflowId);
    const patched = await other.http
      .patch(`/api/v1/workflows/${workflowId}`)
      .set(user.auth)
      .send({ steps: [{ ...transformStep('s1', t._id), config: { expression: 'data.n', data: '{{input}}' } }] });
    expect(patched.status).toBe(200);

    const steps = await stepsOf(await startRun(api, user, workflowId));
    expect((steps[0] as ActionStepSnapshot).config.expression).toBe('data.n');
    // The start that met the edit left no record of its own behind.
    expect(await runsOf(workflowId)).toBe(2);
  });

  it('uses a template and a sub-workflow as they are now', async () => {
    const t = await insertTemplate(api.database.db, user.id, {
      step_type: 'action',
      action_type: 'transform',
      config: { expression: 'data', data: '{{input}}' },
    });
    const child = await createWorkflow(api, user, { name: 'child', steps: [transformStep('c1', t._id)] });
    const parentId = await createWorkflow(api, user, {
      name: 'parent',
      steps: [
        { id: 'p1', template_id: t._id },
        { id: 'sub', workflow_id: child, input: { x: 1 } },
      ],
    });
    await startRun(api, user, parentId);
    await templatesCollection(api.database.db).updateOne(
      { _id: t._id },
      { $set: { 'config.expression': 'data.x', updated_at: new Date() } },
    );
    let steps = await stepsOf(await startRun(api, user, parentId));
    expect((steps[0] as ActionStepSnapshot).config.expression).toBe('data.x');

    await workflowsCollection(api.database.db).updateOne(
      { _id: child },
      { $set: { name: 'child renamed', updated_at: new Date() } },
    );
    steps = await stepsOf(await startRun(api, user, parentId));
    expect((steps[1] as WorkflowStepSnapshot).workflow.workflow_name).toBe('child renamed');
    expect(await runsOf(parentId)).toBe(3);
  });

  it('answers 404 for a workflow deleted through another API process, and records nothing', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const workflowId = await createWorkflow(api, user, { name: 'deleted', steps: [transformStep('s1', t._id)] });
    await startRun(api, user, workflowId);
    expect((await other.http.delete(`/api/v1/workflows/${workflowId}`).set(user.auth)).status).toBe(200);

    const res = await api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({});
    expectError(res, 404, workflowId);
    expect(await runsOf(workflowId)).toBe(1);
  });

  it('checks the input against the input schema as it is now, both ways', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const schema = (field: string) => ({
      type: 'object',
      properties: { [field]: { type: 'string' } },
      required: [field],
    });
    const workflowId = await createWorkflow(api, user, {
      name: 'schema',
      steps: [transformStep('s1', t._id)],
      config: { input_schema: schema('email') },
    });
    const useSchema = async (field: string) => {
      const res = await other.http
        .patch(`/api/v1/workflows/${workflowId}`)
        .set(user.auth)
        .send({ config: { input_schema: schema(field) } });
      expect(res.status).toBe(200);
    };
    await startRun(api, user, workflowId, { email: 'a@example.com' });

    // The schema this process read last accepts this input; the stored one refuses it.
    await useSchema('name');
    const refused = await api.http
      .post(`/api/v1/workflows/${workflowId}/run`)
      .set(user.auth)
      .send({ input: { email: 'a@example.com' } });
    expectError(refused, 400, 'input.name');
    // And the other way round: the schema read last (now `name`) refuses it, the stored one accepts it.
    await useSchema('email');
    await startRun(api, user, workflowId, { email: 'b@example.com' });
    expect(await runsOf(workflowId)).toBe(2);
  });
});
