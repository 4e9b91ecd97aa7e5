/**
 * Human and operator control of runs on the real stack: approval (approve and reject), cancellation of a running
 * activity, and what the status endpoint says when no worker is running or when Temporal closed a run behind the
 * projection's back.
 */
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import {
  actionTemplates,
  createWorkflow,
  insertTemplate,
  isTerminal,
  startRun,
  temporalFinalStatus,
  waitForStatus,
} from '../helpers/workflows';
import { runsCollection } from '../../db/runs';
import type { TemplateDoc } from '../../db/templates';
import { progressQuery } from '../../domain/messages';
import type { ActionType } from '../../temporal/actions/types';

describe('run lifecycle', () => {
  let sink: HttpSink;
  let api: TestApi;
  let worker: TestWorker | undefined;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  beforeAll(async () => {
    sink = await startHttpSink();
    api = await startTestApi(testConfig({ HTTP_ALLOWED_HOSTS: sink.host, RUN_STATUS_CHECK_AFTER_SECONDS: '1' }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await sink?.close();
  });

  const approvalWorkflow = () =>
    createWorkflow(api, user, {
      name: 'needs approval',
      steps: [
        { id: 'prepare', template_id: tpl.transform._id, config: { expression: '"draft"' } },
        { id: 'review', template_id: tpl.approval._id, config: { message: 'Ship it?' } },
        {
          id: 'publish',
          template_id: tpl.transform._id,
          config: { expression: '"published " & $', data: '{{steps.prepare.output}}' },
        },
      ],
    });

  const approve = (runId: string, body: object) =>
    api.http.post(`/api/v1/workflows/runs/${runId}/approve`).set(user.auth).send(body);

  it('approval: the run waits, then an approval resumes it', async () => {
    const runId = await startRun(api, user, await approvalWorkflow());
    const waiting = await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
    expect(waiting.steps.map((s) => s.status)).toEqual(['completed', 'waiting', 'pending']);

    const wrongStep = await approve(runId, { step_id: 'publish', approved: true });
    expect(wrongStep.status).toBe(400);
    expect(wrongStep.body.error).toContain('step_id');

    // The workflow's own view, through the progress query.
    const progress = await api.temporal.workflow.getHandle(runId).query(progressQuery);
    expect(progress).toMatchObject({ status: 'waiting', current_step: 'review', steps: { prepare: 'completed' } });

    // Two decisions at once: exactly one is taken, the other is told the step is no longer waiting.
    const [r1, r2] = await Promise.all([
      approve(runId, { step_id: 'review', approved: true, comment: 'looks good' }),
      approve(runId, { step_id: 'review', approved: true, comment: 'looks good' }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    const res = r1.status === 200 ? r1 : r2;
    expect(res.body.data).toMatchObject({ run_id: runId, step_id: 'review', approved: true });

    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.outputs.review).toMatchObject({ approved: true, comment: 'looks good', decided_by: user.id });
    expect(done.outputs.publish).toBe('published draft');

    const late = await approve(runId, { step_id: 'review', approved: true });
    expect(late.status).toBe(409);
  });

  it('?wait long-polls: the answer comes when the run changes', async () => {
    const runId = await startRun(api, user, await approvalWorkflow());
    await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
    const polled = api.http
      .get(`/api/v1/workflows/runs/${runId}/status?wait=30`)
      .set(user.auth)
      .then((r) => r);
    // The decision is sent once the poll is under way; the poll answers with the changed run, not the waiting one.
    expect((await approve(runId, { step_id: 'review', approved: true })).status).toBe(200);
    const res = await polled;
    expect(res.status).toBe(200);
    expect(res.body.data.steps[1].status).not.toBe('waiting');
  });

  it('?wait&until=end answers once the run has ended, not at its first change', async () => {
    // After the approval, a step that takes a while: the run changes (review completed, call running) long before
    // it ends, so a wait that answered at the first change would answer a running run.
    sink.route('/slow-publish', { status: 200, body: { ok: true }, delayMs: 1_500 });
    const wf = await createWorkflow(api, user, {
      name: 'approve then call',
      steps: [
        { id: 'review', template_id: tpl.approval._id, config: { message: 'Call?' } },
        { id: 'call', template_id: tpl.http_request._id, config: { url: sink.url('/slow-publish') } },
      ],
    });
    const runId = await startRun(api, user, wf);
    await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
    const openapi = openApiChecker();
    const url = `/api/v1/workflows/runs/${runId}/status?wait=30&until=end`;
    const polled = api.http
      .get(url)
      .set(user.auth)
      .then((r) => r);
    expect((await approve(runId, { step_id: 'review', approved: true })).status).toBe(200);
    const res = await polled;
    expect(res.status).toBe(200);
    openapi.check(res);
    expect(res.body.data.status).toBe('completed');
    expect(res.body.data.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);

    // A wait on a run that has ended answers at once; an unknown `until` is a 400 naming the field.
    const again = await api.http.get(url).set(user.auth);
    expect(again.body.data.status).toBe('completed');
    const bad = await api.http.get(`/api/v1/workflows/runs/${runId}/status?wait=1&until=later`).set(user.auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('until');
  });

  it('approval: a rejection fails the run with the reason', async () => {
    const runId = await startRun(api, user, await approvalWorkflow());
    await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
    const res = await approve(runId, { step_id: 'review', approved: false, comment: 'not yet' });
    expect(res.status).toBe(200);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ step_id: 'review', reason: 'rejected' });
    expect(done.error?.message).toContain('not yet');
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'failed', 'skipped']);
  });

  it('cancel: a run with a running activity ends cancelled and the activity is cancelled', async () => {
    sink.route('/slow', { hang: true });
    const wf = await createWorkflow(api, user, {
      name: 'slow',
      steps: [
        {
          id: 'call',
          template_id: tpl.http_request._id,
          config: { url: sink.url('/slow'), timeout_seconds: 120 },
          timeout_seconds: 300,
        },
        { id: 'after', template_id: tpl.transform._id, config: { expression: '1' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    await sink.waitForRequests(1, '/slow');
    await waitForStatus(api, user, runId, (s) => s.steps[0]?.status === 'running');
    const res = await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).send({});
    expect(res.status).toBe(202);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('cancelled');
    expect(done.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
    expect(done.error).toMatchObject({ step_id: 'call', reason: 'cancelled' });
    expect(await temporalFinalStatus(api, runId)).toBe('CANCELLED');
    // A second cancel is a conflict, not a silent success.
    expect((await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).send({})).status).toBe(409);
  });

  it('cancel: a run waiting on a durable timer ends cancelled', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'sleepy',
      steps: [{ id: 'nap', template_id: tpl.delay._id, config: { seconds: 3600 } }],
    });
    const runId = await startRun(api, user, wf);
    await waitForStatus(api, user, runId, (s) => s.steps[0]?.status === 'running');
    expect((await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).send({})).status).toBe(202);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('cancelled');
  });

  it('a run Temporal closed is never reported running (answered from Temporal, not written)', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'to terminate',
      steps: [{ id: 'nap', template_id: tpl.delay._id, config: { seconds: 3600 } }],
    });
    const runId = await startRun(api, user, wf);
    await waitForStatus(api, user, runId, (s) => s.status === 'running');
    // An operator terminates the run in Temporal directly: the workflow gets no chance to write its outcome.
    await api.temporal.workflow.getHandle(runId).terminate('operator test');
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ step_id: 'nap', reason: 'terminated' });
  });

  it('a run over config.timeout_seconds ends timed_out, recorded by the workflow itself', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'too slow',
      config: { timeout_seconds: 2 },
      steps: [{ id: 'nap', template_id: tpl.delay._id, config: { seconds: 3600 } }],
    });
    const runId = await startRun(api, user, wf);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('timed_out');
    expect(done.error).toMatchObject({ step_id: 'nap', reason: 'timeout' });
    // The deadline is the workflow's timer: it fails its execution with the timeout, Temporal's own timeout is a
    // backstop that did not fire, and the projection holds the outcome the workflow wrote (no status read wrote it).
    expect(await temporalFinalStatus(api, runId)).toBe('FAILED');
    const stored = await runsCollection(api.database.db).findOne({ _id: runId });
    expect(stored?.status).toBe('timed_out');
    expect(stored?.steps[0]).toMatchObject({ status: 'failed', error: { reason: 'timeout' } });
  });

  it('an agent step fails clearly until agent steps exist', async () => {
    const agent = await insertTemplate(api.database.db, user.id, { step_type: 'agent' });
    const wf = await createWorkflow(api, user, { name: 'agent', steps: [{ id: 'think', template_id: agent._id }] });
    const runId = await startRun(api, user, wf);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error?.step_id).toBe('think');
  });

  it('run responses match the OpenAPI document', async () => {
    const checker = openApiChecker();
    const created = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({ name: 'doc', steps: [{ id: 'a', template_id: tpl.transform._id, config: { expression: '1' } }] });
    checker.check(created);
    const id = created.body.data.id as string;
    checker.check(await api.http.get('/api/v1/workflows?limit=1').set(user.auth));
    checker.check(await api.http.get(`/api/v1/workflows/${id}`).set(user.auth));
    const started = await api.http.post(`/api/v1/workflows/${id}/run`).set(user.auth).send({});
    checker.check(started);
    const runId = started.body.data.run_id as string;
    await waitForStatus(api, user, runId, isTerminal);
    checker.check(await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth));
    checker.check(await api.http.get(`/api/v1/workflows/${id}/runs`).set(user.auth));
    checker.check(await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).send({}));
    checker.check(await api.http.get('/api/v1/workflows/runs/run_doesnotexist1/status').set(user.auth));
    expect(checker.checked.size).toBeGreaterThanOrEqual(6);
  });

  it('with every worker stopped, status still answers and reports the run as not progressing', async () => {
    await worker?.stop();
    worker = undefined;
    const wf = await createWorkflow(api, user, {
      name: 'no worker',
      steps: [{ id: 'a', template_id: tpl.transform._id, config: { expression: '1' } }],
    });
    const runId = await startRun(api, user, wf);
    const stalled = await waitForStatus(api, user, runId, (s) => s.progress.stalled);
    expect(stalled.status).toBe('queued');
    expect(stalled.progress.message).toContain('no worker');

    // A worker comes back: the run completes and the stall flag clears.
    worker = await startTestWorker(api.config, api.database);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.progress.stalled).toBe(false);
  });
});
