/**
 * The Temporal Web UI's "Stack Trace" tab sends the `__stack_trace` query. The worker runs the SDK as it ships (no
 * patched internals, docs/decisions/0090-no-sdk-patches.md), so a default worker answers it for a run waiting at an
 * approval with the source-mapped stack of the wait, and the run then goes on: it is approved and completes.
 */
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('the Web UI stack trace query', () => {
  let api: TestApi;
  let worker: TestWorker;
  beforeAll(async () => {
    api = await startTestApi();
    worker = await startTestWorker(api.config, api.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('answers with where a run waiting at an approval waits, and the run completes', async () => {
    const user: TestUser = await createTestUser(api.database.db);
    const tpl: Record<ActionType, TemplateDoc> = await actionTemplates(api.database.db, user.id);
    const workflowId = await createWorkflow(api, user, {
      name: 'waits',
      steps: [{ id: 'gate', template_id: tpl.approval._id, config: { message: 'Go on?' } }],
    });
    const runId = await startRun(api, user, workflowId, {});
    await waitForStatus(api, user, runId, (s) => s.status === 'waiting');

    const trace = await api.temporal.workflow.getHandle(runId).query<string>('__stack_trace');
    // The approval's `condition`, its frame mapped back to the workflow's own source through the bundle's source map.
    expect(trace).toMatch(/at performApproval \([^)]*temporal\/workflows\/builtin-steps\.ts:\d+:\d+\)/);

    const approved = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'gate', approved: true });
    expect(approved.status).toBe(200);
    expect((await waitForStatus(api, user, runId, isTerminal)).status).toBe('completed');
  });
});
