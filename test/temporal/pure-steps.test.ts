/**
 * Pure steps (`transform`) run as local activities: no activity task goes through the Temporal server, a chain of
 * them completes in one workflow task, and the status and event log show each step as started, given its input, and
 * completed (or failed) — one write per step.
 */
import { MongoClient } from 'mongodb';
import { runEventsCollection } from '../../db/run-events';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import {
  actionTemplates,
  createWorkflow,
  isTerminal,
  startRun,
  temporalFinalStatus,
  waitForStatus,
} from '../helpers/workflows';

describe('pure steps as local activities', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  // The worker's database commands, counted (its own client, monitored): what a run costs in round trips.
  const commands: string[] = [];
  let monitored: MongoClient | undefined;

  beforeAll(async () => {
    api = await startTestApi();
    monitored = new MongoClient(api.config.MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => {
      const target = (e.command as Record<string, unknown>)[e.commandName];
      commands.push(`${e.commandName} ${typeof target === 'string' ? target : ''}`);
    });
    const db = monitored.db(api.database.db.databaseName);
    worker = await startTestWorker(api.config, { client: monitored, db, close: () => monitored!.close() });
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(async () => {
    await worker?.stop();
    await monitored?.close();
    await api?.close();
  });

  const eventsOf = async (runId: string) =>
    (await runEventsCollection(api.database.db).find({ run_id: runId }).sort({ seq: 1 }).toArray()).map((e) => {
      const data = JSON.parse(e.data_json) as { step_id?: string };
      return `${e.seq} ${e.type}${data.step_id ? ` ${data.step_id}` : ''}`;
    });

  it('runs three transforms without one activity task, and shows each step complete with its input', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'pure line',
      steps: [
        { id: 'a', template_id: tpl.transform._id, config: { expression: '{"n": n + 1}', data: '{{input}}' } },
        { id: 'b', template_id: tpl.transform._id, config: { expression: 'n * 2', data: '{{steps.a.output}}' } },
        { id: 'c', template_id: tpl.transform._id, config: { expression: '$ + 1', data: '{{steps.b.output}}' } },
      ],
    });
    commands.length = 0;
    const runId = await startRun(api, user, wf, { n: 1 });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs).toEqual({ a: { n: 2 }, b: 4, c: 5 });
    // Each step one write (its start, input and end together) and one event insert; the run's end the same.
    expect(commands.filter((c) => c.endsWith(' runs'))).toEqual(Array(4).fill('findAndModify runs'));
    expect(commands.filter((c) => c.endsWith(' run_events'))).toEqual(Array(4).fill('insert run_events'));
    for (const step of status.steps) {
      expect(step).toMatchObject({ status: 'completed', attempts: 1, error: null });
      expect(Date.parse(step.started_at!)).toBeLessThanOrEqual(Date.parse(step.completed_at!));
    }
    expect(status.steps[1]!.input).toEqual({ expression: 'n * 2', data: { n: 2 } });

    // The projection is terminal a moment before the execution closes: wait for the close, then read the history.
    expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const types = (history.events ?? []).map((e) => String(e.eventType));
    const count = (t: string) => types.filter((x) => x.endsWith(t) || x === String(eventTypeNumber(t))).length;
    expect(count('ACTIVITY_TASK_SCHEDULED')).toBe(0);
    expect(count('WORKFLOW_TASK_COMPLETED')).toBe(1);
    // One local activity per step, and the projection's for the run's end.
    expect(localActivityMarkers(history)).toBe(4);

    expect(await eventsOf(runId)).toEqual([
      '1 step.started a',
      '2 step.completed a',
      '3 step.started b',
      '4 step.completed b',
      '5 step.started c',
      '6 step.completed c',
      '7 run.ended',
    ]);
  });

  it('a chain that meets a failing step stops there: the steps before it completed, the step fails on its own', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'pure line failing',
      steps: [
        { id: 'a', template_id: tpl.transform._id, config: { expression: 'n + 1', data: '{{input}}' } },
        { id: 'b', template_id: tpl.transform._id, config: { expression: '$error("no")', data: '{{steps.a.output}}' } },
        { id: 'c', template_id: tpl.transform._id, config: { expression: '$ + 1', data: '{{steps.b.output}}' } },
      ],
    });
    const runId = await startRun(api, user, wf, { n: 1 });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'b' });
    expect(status.steps.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'completed', 1],
      ['b', 'failed', 1],
      ['c', 'skipped', 0],
    ]);
    expect(status.outputs).toEqual({ a: 2 });
    // b was given a's output, and nothing was recorded for b by the line: one start, one failure.
    expect(status.steps[1]!.input).toEqual({ expression: '$error("no")', data: 2 });
    expect(await eventsOf(runId)).toEqual([
      '1 step.started a',
      '2 step.completed a',
      '3 step.started b',
      '4 step.failed b',
      '5 run.ended',
    ]);
  });

  it('branches of pure steps that meet again: each step its own local activity, given what it waits for', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'pure diamond',
      steps: [
        { id: 'a', template_id: tpl.transform._id, config: { expression: 'n', data: '{{input}}' } },
        {
          id: 'b',
          template_id: tpl.transform._id,
          depends_on: ['a'],
          config: { expression: '$ * 10', data: '{{steps.a.output}}' },
        },
        {
          id: 'c',
          template_id: tpl.transform._id,
          depends_on: ['a'],
          config: { expression: '$ + 1', data: '{{steps.a.output}}' },
        },
        {
          id: 'd',
          template_id: tpl.transform._id,
          depends_on: ['b', 'c'],
          config: { expression: 'x + y', data: { x: '{{steps.b.output}}', y: '{{steps.c.output}}' } },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { n: 3 });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs).toEqual({ a: 3, b: 30, c: 4, d: 34 });
    expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
    expect(localActivityMarkers(await api.temporal.workflow.getHandle(runId).fetchHistory())).toBe(5);
  });

  it('a failing transform shows started, then failed with its attempt, and the run fails with the step named', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'pure failing',
      steps: [{ id: 'bad', template_id: tpl.transform._id, config: { expression: '$error("no")' } }],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(status.steps[0]!.started_at).not.toBeNull();
    expect(status.error).toMatchObject({ step_id: 'bad' });
    expect(await eventsOf(runId)).toEqual(['1 step.started bad', '2 step.failed bad', '3 run.ended']);
  });

  it('a map of transforms completes every item', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'pure map',
      steps: [
        {
          id: 'double',
          template_id: tpl.transform._id,
          map: { over: '{{input.items}}', concurrency: 3 },
          config: { expression: '$ * 2', data: '{{map.item}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf, { items: [1, 2, 3, 4, 5] });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs).toEqual({ double: [2, 4, 6, 8, 10] });
  });
});

/** Local activity results recorded in a history (markers named `core_local_activity`; patch markers are others). */
function localActivityMarkers(history: {
  events?: { eventType?: unknown; markerRecordedEventAttributes?: unknown }[] | null;
}): number {
  return (history.events ?? []).filter(
    (e) =>
      (e.eventType === 25 || String(e.eventType).endsWith('MARKER_RECORDED')) &&
      (e.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName === 'core_local_activity',
  ).length;
}

/** History event types come as enum numbers from fetchHistory (proto), or names in JSON. */
function eventTypeNumber(name: string): number {
  const numbers: Record<string, number> = { ACTIVITY_TASK_SCHEDULED: 10, WORKFLOW_TASK_COMPLETED: 7 };
  return numbers[name] ?? -1;
}
