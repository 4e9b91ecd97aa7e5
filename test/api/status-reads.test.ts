/**
 * GET …/status only reads (issue #34: one writer of run state). The API's own MongoDB client is replaced by one with
 * command monitoring, and each read of a run that needs Temporal's word — a quiet running run, a run Temporal closed
 * behind the projection's back, a run recorded but never started — is checked to send no write command and to start
 * no Temporal workflow, while still answering what Temporal knows.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { Registry } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../api/app';
import { newId } from '../../db/ids';
import { insertRun, newRunDoc, runsCollection } from '../../db/runs';
import { actionStep, testSnapshot } from '../helpers/snapshots';
import {
  silentLogger,
  startTestApi,
  startTestWorker,
  testConfig,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, startRun, waitForStatus, type StatusBody } from '../helpers/workflows';
import { composeApi } from '../../api/compose';

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'bulkWrite', 'createIndexes']);
/** The request rate limiter counts every request, reads included (api/middleware/rate-limit.ts): not run state. */
const NOT_RUN_STATE = new Set(['rate_limits']);

describe('status reads write nothing', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let monitored: MongoClient;
  let http: ReturnType<typeof request>;
  let delayTemplate: string;
  const commands: CommandStartedEvent[] = [];

  beforeAll(async () => {
    api = await startTestApi(testConfig({ RUN_STATUS_CHECK_AFTER_SECONDS: '1' }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    delayTemplate = (await actionTemplates(api.database.db, user.id)).delay._id;
    monitored = new MongoClient(api.config.MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => commands.push(e));
    await monitored.connect();
    const app = createApp(
      composeApi({
        config: api.config,
        db: monitored.db(api.config.MONGODB_DB),
        temporal: api.temporal,
        logger: silentLogger,
        metrics: new Registry(),
      }),
    );
    http = request(app.callback());
  });
  afterAll(async () => {
    await monitored?.close();
    await worker?.stop();
    await api?.close();
  });

  /** Reads the status through the monitored app; returns it with the write commands and workflow starts it made. */
  async function readStatus(runId: string) {
    const executions = await api.temporal.workflow.count();
    commands.length = 0;
    const res = await http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth);
    expect(res.status).toBe(200);
    const writes = commands
      .filter((c) => WRITES.has(c.commandName) && !NOT_RUN_STATE.has(String(c.command[c.commandName])))
      .map((c) => `${c.commandName} ${String(c.command[c.commandName])}`);
    return {
      body: (res.body as { data: StatusBody }).data,
      writes,
      started: (await api.temporal.workflow.count()).count - executions.count,
    };
  }

  /** As if nothing had been written for an hour: the read then asks Temporal. */
  const makeQuiet = (runId: string) =>
    runsCollection(api.database.db).updateOne(
      { _id: runId },
      { $set: { updated_at: new Date(Date.now() - 3600_000) } },
    );

  const napWorkflow = (name: string) =>
    createWorkflow(api, user, {
      name,
      steps: [{ id: 'nap', template_id: delayTemplate, config: { seconds: 3600 } }],
      config: { callback_url: 'https://example.com/hook' },
    });

  it('a quiet running run: one look at Temporal, no write', async () => {
    const runId = await startRun(api, user, await napWorkflow('quiet'));
    await waitForStatus(api, user, runId, (s) => s.status === 'running');
    await makeQuiet(runId);
    const read = await readStatus(runId);
    expect(read.body.status).toBe('running');
    expect(read.body.progress.stalled).toBe(false);
    expect(read.body.progress.checked_at).not.toBeNull();
    expect(read.writes).toEqual([]);
    expect(read.started).toBe(0);
    await api.temporal.workflow.getHandle(runId).terminate('test over');
  });

  it('a run Temporal terminated behind the projection: answered failed, not written, no webhook started', async () => {
    const runId = await startRun(api, user, await napWorkflow('terminated'));
    await waitForStatus(api, user, runId, (s) => s.status === 'running');
    await api.temporal.workflow.getHandle(runId).terminate('operator test');
    await makeQuiet(runId);
    const read = await readStatus(runId);
    expect(read.body.status).toBe('failed');
    expect(read.body.error).toMatchObject({ step_id: 'nap', reason: 'terminated' });
    expect(read.writes).toEqual([]);
    expect(read.started).toBe(0);
    expect((await runsCollection(api.database.db).findOne({ _id: runId }))?.status).toBe('running');
  });

  it('a run recorded but never started: answered failed (not_started), not written', async () => {
    const runId = newId('run');
    const an_hour_ago = new Date(Date.now() - 3600_000);
    const snapshot = testSnapshot(runId, [actionStep('a')], { owner_id: user.id });
    await insertRun(api.database.db, newRunDoc({ snapshot, namespace: 'default', taskQueue: 'q', now: an_hour_ago }));
    const read = await readStatus(runId);
    expect(read.body.status).toBe('failed');
    expect(read.body.error).toMatchObject({ reason: 'not_started' });
    expect(read.writes).toEqual([]);
    expect(read.started).toBe(0);
    expect((await runsCollection(api.database.db).findOne({ _id: runId }))?.status).toBe('queued');
  });
});
