/**
 * Counts that must agree with each other, on a real API, worker and Temporal: a scheduled run is counted started as
 * well as finished (started minus finished never goes negative), `delay` and `approval` steps are step attempts like
 * the activity steps, and a request the body parser refuses is labelled with the route it was sent to, not
 * `unmatched`.
 */
import { Registry } from 'prom-client';
import { waitFor } from '../../devstack/process';
import { parseProm, sampleValue, type Sample } from '../helpers/prom-text';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';

describe('counts that agree', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;
  const registry = new Registry();
  const schedules: string[] = [];

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database, { metrics: registry });
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  }, 60_000);
  afterAll(async () => {
    for (const id of schedules)
      await api?.temporal.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await worker?.stop();
    await api?.close();
  });

  const workerSamples = async (): Promise<Sample[]> => parseProm(await registry.metrics());

  it('counts a scheduled run started in the worker, as it counts it finished', async () => {
    const wf = await createWorkflow(api, user, {
      name: uniqueId('sched-count'),
      steps: [{ id: 'echo', template_id: tpl.transform._id, config: { expression: '1 + 1' } }],
    });
    const created = await api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(user.auth)
      .send({ spec: { cron: ['0 8 * * 1-5'] }, paused: true });
    expect(created.status).toBe(201);
    const scheduleId = (created.body as { data: { id: string } }).data.id;
    schedules.push(scheduleId);
    expect((await api.http.post(`/api/v1/schedules/${scheduleId}/trigger`).set(user.auth)).status).toBe(202);

    let samples: Sample[] = [];
    await waitFor(
      'the scheduled run finished in the worker metrics',
      async () => {
        samples = await workerSamples();
        const labels = { kind: 'action_only', status: 'completed' };
        return sampleValue(samples, 'stepwise_runs_finished_total', labels) === 1;
      },
      { timeoutMs: 40_000 },
    );
    expect(sampleValue(samples, 'stepwise_runs_started_total', { kind: 'action_only' })).toBe(1);
  }, 60_000);

  it('counts delay and approval steps as step attempts, completed and failed', async () => {
    const wf = await createWorkflow(api, user, {
      name: uniqueId('builtin-count'),
      steps: [
        { id: 'pause', template_id: tpl.delay._id, config: { seconds: 1 } },
        { id: 'gate', template_id: tpl.approval._id, config: { message: 'Go on?' } },
      ],
    });
    const approve = async (approved: boolean) => {
      const runId = await startRun(api, user, wf);
      await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
      const decided = await api.http
        .post(`/api/v1/workflows/runs/${runId}/approve`)
        .set(user.auth)
        .send({ step_id: 'gate', approved });
      expect(decided.status).toBe(200);
      return (await waitForStatus(api, user, runId, isTerminal)).status;
    };
    expect(await approve(true)).toBe('completed');
    expect(await approve(false)).toBe('failed');

    const attempts = (actionType: string, outcome: string) => ({ kind: 'action', action_type: actionType, outcome });
    let samples: Sample[] = [];
    await waitFor('both runs finished in the worker metrics', async () => {
      samples = await workerSamples();
      const done = (status: string) =>
        sampleValue(samples, 'stepwise_runs_finished_total', { kind: 'action_only', status }) ?? 0;
      return done('completed') >= 1 && done('failed') === 1;
    });
    expect(sampleValue(samples, 'stepwise_step_attempts_total', attempts('delay', 'completed'))).toBe(2);
    expect(sampleValue(samples, 'stepwise_step_attempts_total', attempts('approval', 'completed'))).toBe(1);
    expect(sampleValue(samples, 'stepwise_step_attempts_total', attempts('approval', 'failed'))).toBe(1);
    // The delay waited its second, in the duration histogram too.
    const delaySum = sampleValue(samples, 'stepwise_step_attempt_duration_seconds_sum', attempts('delay', 'completed'));
    expect(delaySum).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it('labels a form-encoded POST to a hook URL with the hook route, not unmatched', async () => {
    const wf = await createWorkflow(api, user, {
      name: uniqueId('hook-count'),
      steps: [{ id: 'echo', template_id: tpl.transform._id, config: { expression: '1' } }],
    });
    const hook = await api.http.post(`/api/v1/workflows/${wf}/hooks`).set(user.auth).send({ signed: false });
    expect(hook.status).toBe(201);
    const hookId = (hook.body as { data: { id: string } }).data.id;
    const sent = await api.http
      .post(`/api/v1/hooks/${hookId}`)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('n=7');
    expect(sent.status).toBe(415);

    const samples = parseProm((await api.http.get('/metrics')).text);
    const requests = (route: string) =>
      sampleValue(samples, 'stepwise_http_requests_total', { method: 'POST', route, status: '415' });
    expect({ hook: requests('/api/v1/hooks/:hookId'), unmatched: requests('unmatched') }).toEqual({
      hook: 1,
      unmatched: undefined,
    });
  }, 30_000);
});
