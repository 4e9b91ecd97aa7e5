/**
 * Temporal's per-promise stack traces are off in the workflow threads unless WORKFLOW_STACK_TRACES=true
 * (temporal/workflow-threads.ts). A default worker refuses the `__stack_trace` query of a run waiting at an approval (the
 * SDK's "not enabled"); a real worker process that keeps them answers it with the stack of the wait. Either way the
 * run goes on: it is approved and completes.
 */
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

/** Starts a run that waits at an approval; returns the answer to its stack trace query, then lets it finish. */
async function stackTraceOfWaitingRun(api: TestApi): Promise<{ trace?: string; error?: string }> {
  const user: TestUser = await createTestUser(api.database.db);
  const tpl: Record<ActionType, TemplateDoc> = await actionTemplates(api.database.db, user.id);
  const workflowId = await createWorkflow(api, user, {
    name: 'waits',
    steps: [{ id: 'gate', template_id: tpl.approval._id, config: { message: 'Go on?' } }],
  });
  const runId = await startRun(api, user, workflowId, {});
  await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
  const answer = await api.temporal.workflow
    .getHandle(runId)
    .query<string>('__stack_trace')
    .then(
      (trace) => ({ trace }),
      (err: unknown) => ({ error: err instanceof Error ? err.name : String(err) }),
    );
  const approved = await api.http
    .post(`/api/v1/workflows/runs/${runId}/approve`)
    .set(user.auth)
    .send({ step_id: 'gate', approved: true });
  expect(approved.status).toBe(200);
  expect((await waitForStatus(api, user, runId, isTerminal)).status).toBe('completed');
  return answer;
}

describe('workflow stack traces', () => {
  describe('by default', () => {
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

    it('are not recorded: the query says so, and the run completes', async () => {
      const answer = await stackTraceOfWaitingRun(api);
      expect(answer.trace).toBeUndefined();
      // The SDK's "not enabled" failure reaches the client encrypted (the payload codec covers failure messages).
      expect(answer.error).toBe('QueryNotRegisteredError');
    });
  });

  describe('with WORKFLOW_STACK_TRACES=true', () => {
    let api: TestApi;
    let worker: WorkerProcess;
    beforeAll(async () => {
      api = await startTestApi(testConfig());
      worker = spawnWorker(api.config, { WORKFLOW_STACK_TRACES: 'true' });
      await worker.ready;
    }, 90_000);
    afterAll(async () => {
      worker?.kill('SIGKILL');
      await worker?.exited;
      await api?.close();
    });

    it('answer the query with where the run waits', async () => {
      const answer = await stackTraceOfWaitingRun(api);
      expect(answer.error).toBeUndefined();
      expect(answer.trace).toMatch(/builtin-steps|performApproval|condition/);
    });
  });
});
