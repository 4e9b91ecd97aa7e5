/**
 * The action-step activity in MockActivityEnvironment against the real database and a real HTTP sink: it writes the
 * step's progress itself (a quick attempt once, start and end together; a slow one's start while it works),
 * classifies failures once, and performs no side effect for a run that already ended.
 */
import { noExpressions } from '../helpers/expressions';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { newRunDoc, findRun, runsCollection } from '../../db/runs';
import { recordRunOutcome } from '../../db/run-end';
import { runEventsCollection } from '../../db/run-events';
import { START_WRITE_DELAY_MS } from '../../temporal/activities/action-step';
import { Registry } from 'prom-client';
import { createWorkerMetrics } from '../../temporal/metrics';
import { createActivities } from '../../temporal/activities';
import { createMailer } from '../../temporal/mail/mailer';
import type { RunSnapshot } from '../../domain/run';
import type { ActionStepRequest, ActionStepResult } from '../../domain/steps';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { openTestDb, silentLogger, testConfig } from '../helpers/stack';
import type { Database } from '../../db/client';

function snapshot(runId: string): RunSnapshot {
  return {
    run_id: runId,
    workflow_id: 'wf_x',
    workflow_name: 'w',
    owner_id: 'usr_owner',
    input: {},
    created_at: new Date().toISOString(),
    steps: [
      {
        id: 'call',
        template_id: 'tpl_x',
        template_name: 't',
        input: null,
        retry: { max_attempts: 2 },
        timeout_seconds: 30,
        kind: 'action',
        action_type: 'http_request',
        config: {},
      },
    ],
  };
}

describe('runActionStep activity', () => {
  let database: Database;
  let sink: HttpSink;
  let activities: ReturnType<typeof createActivities>;

  beforeAll(async () => {
    sink = await startHttpSink({
      '/ok': { status: 200, body: { fine: true } },
      '/down': { status: 503 },
      '/slow': { status: 200, body: { slow: true }, delayMs: START_WRITE_DELAY_MS * 15 },
    });
    const config = testConfig({ HTTP_ALLOWED_HOSTS: sink.host });
    database = await openTestDb(config);
    activities = createActivities({
      config,
      db: database.db,
      logger: silentLogger,
      mailer: createMailer(config.SMTP_URL, config.SMTP_FROM),
      expressions: noExpressions,
      metrics: createWorkerMetrics(new Registry()),
    });
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
    await sink?.close();
  });

  const request = (runId: string, path: string): ActionStepRequest => ({
    run_id: runId,
    step_id: 'call',
    action_type: 'http_request',
    config: { url: sink.url(path) },
    input: null,
    max_attempts: 2,
  });
  const insert = (runId: string) =>
    runsCollection(database.db).insertOne(
      newRunDoc({ snapshot: snapshot(runId), namespace: 'default', taskQueue: 'q' }),
    );

  it('executes, returns the output and records the step', async () => {
    await insert('run_activity0001');
    const result = await new MockActivityEnvironment({ attempt: 1 }).run<
      [ActionStepRequest],
      ActionStepResult,
      typeof activities.runActionStep
    >(activities.runActionStep, request('run_activity0001', '/ok'));
    expect(result.output).toMatchObject({ status: 200, body: { fine: true } });
    const run = await findRun(database.db, 'usr_owner', 'run_activity0001');
    expect(run?.steps[0]).toMatchObject({ status: 'completed', attempts: 1 });
  });

  it('a retryable failure keeps the step running before the last attempt and fails it on the last', async () => {
    await insert('run_activity0002');
    const first = new MockActivityEnvironment({ attempt: 1 }).run(
      activities.runActionStep,
      request('run_activity0002', '/down'),
    );
    await expect(first).rejects.toMatchObject({ type: 'http_5xx', nonRetryable: false });
    let run = await findRun(database.db, 'usr_owner', 'run_activity0002');
    expect(run?.steps[0]).toMatchObject({ status: 'running', attempts: 1, error: { reason: 'http_5xx' } });
    const last = new MockActivityEnvironment({ attempt: 2 }).run(
      activities.runActionStep,
      request('run_activity0002', '/down'),
    );
    await expect(last).rejects.toBeInstanceOf(ApplicationFailure);
    run = await findRun(database.db, 'usr_owner', 'run_activity0002');
    expect(run?.steps[0]).toMatchObject({ status: 'failed', attempts: 2 });
  });

  const eventsOf = async (runId: string) =>
    (await runEventsCollection(database.db).find({ run_id: runId }).sort({ seq: 1 }).toArray()).map(
      (e) => `${e.seq} ${e.type}`,
    );

  it('writes a quick attempt once, start and end together; a slow one shows running while it works', async () => {
    await insert('run_activity0004');
    await new MockActivityEnvironment({ attempt: 1 }).run(activities.runActionStep, request('run_activity0004', '/ok'));
    const quick = await findRun(database.db, 'usr_owner', 'run_activity0004');
    expect(quick?.steps[0]).toMatchObject({ status: 'completed', attempts: 1 });
    expect(quick?.steps[0]?.started_at).toBeInstanceOf(Date);
    expect(quick?.steps[0]?.input_json ?? null).not.toBeNull();
    expect(await eventsOf('run_activity0004')).toEqual(['1 step.started', '2 step.completed']);

    await insert('run_activity0005');
    const slow = new MockActivityEnvironment({ attempt: 1 }).run(
      activities.runActionStep,
      request('run_activity0005', '/slow'),
    );
    // Once the delay has passed, the step shows running while the call still waits for its answer.
    let seen: string | undefined;
    for (let i = 0; i < 100 && seen !== 'running' && seen !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, START_WRITE_DELAY_MS / 2));
      seen = (await findRun(database.db, 'usr_owner', 'run_activity0005'))?.steps[0]?.status;
    }
    expect(seen).toBe('running');
    await slow;
    expect((await findRun(database.db, 'usr_owner', 'run_activity0005'))?.steps[0]).toMatchObject({
      status: 'completed',
      attempts: 1,
    });
    expect(await eventsOf('run_activity0005')).toEqual(['1 step.started', '2 step.completed']);
  });

  it('performs no side effect for a run that already ended', async () => {
    await insert('run_activity0003');
    await recordRunOutcome(database.db, 'run_activity0003', { status: 'cancelled', error: null });
    const before = sink.requestsTo('/ok').length;
    await expect(
      new MockActivityEnvironment({ attempt: 1 }).run(activities.runActionStep, request('run_activity0003', '/ok')),
    ).rejects.toMatchObject({ type: 'run_ended', nonRetryable: true });
    expect(sink.requestsTo('/ok')).toHaveLength(before);
  });
});
