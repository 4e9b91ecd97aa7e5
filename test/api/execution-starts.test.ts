/**
 * Run starts acknowledged before Temporal has them (api/commands/execution-starts.ts), against the real Temporal test
 * server and database: the API acknowledges early only after Temporal answered its last start, a start made behind
 * the answer clears the run's mark, and the sweep starts every acknowledged run left behind — and only those.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { ExecutionStarts, startExecution, sweepUnstarted, SWEEP_AFTER_MS } from '../../api/commands/execution-starts';
import { createTemporalClient } from '../../temporal/client';
import { newRunDoc, recordRunOutcome, runsCollection, type RunDoc } from '../../db/runs';
import { deriveOutcome } from '../../temporal/contract/run-state';
import { actionStep, testSnapshot } from '../helpers/snapshots';
import { silentLogger, startTestApi, useTestDb, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';
import { waitFor } from '../../devstack/process';

let api: TestApi;
let user: TestUser;
/** The sweep's own database: the test API sweeps its database in the background, as api/server.ts does. */
const sweepDb = useTestDb();

beforeAll(async () => {
  api = await startTestApi();
  user = await createTestUser(api.database.db);
});
afterAll(() => api?.close());

/** A queued run as a start left it: recorded, acknowledged `ageMs` ago, never started. No worker polls its queue. */
function leftBehind(id: string, ageMs: number, fields: Partial<RunDoc> = {}): RunDoc {
  const at = new Date(Date.now() - ageMs);
  const doc = newRunDoc({
    snapshot: testSnapshot(id, [actionStep('only')], { owner_id: user.id }),
    namespace: api.config.TEMPORAL_NAMESPACE,
    taskQueue: 'sweep-test-no-worker',
    now: at,
  });
  return { ...doc, start_pending_at: at, ...fields };
}

const deps = () => ({ db: sweepDb.db, temporal: api.temporal, logger: silentLogger, maxConcurrentRuns: 50 });

async function executionExists(runId: string): Promise<boolean> {
  try {
    await api.temporal.workflow.getHandle(runId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

describe('acknowledging a start before Temporal has it', () => {
  it('happens only once Temporal answered the last start; an unreachable Temporal turns it off', async () => {
    const starts = new ExecutionStarts({ db: api.database.db, temporal: api.temporal, logger: silentLogger });
    expect(starts.acknowledgeEarly).toBe(false);
    const doc = leftBehind('run_early_sync1', 0);
    await runsCollection(api.database.db).insertOne(doc);
    await starts.startNow(doc, doc.snapshot, { removeOnFailure: false });
    expect(starts.acknowledgeEarly).toBe(true);

    const down = createTemporalClient({
      address: '127.0.0.1:1',
      namespace: api.config.TEMPORAL_NAMESPACE,
      codecKeys: api.config.PAYLOAD_CODEC_KEYS,
    });
    try {
      const downStarts = new ExecutionStarts({ db: api.database.db, temporal: down, logger: silentLogger });
      const lost = leftBehind('run_early_down1', 0);
      await runsCollection(api.database.db).insertOne(lost);
      await expect(downStarts.startNow(lost, lost.snapshot, { removeOnFailure: true })).rejects.toMatchObject({
        status: 503,
      });
      expect(downStarts.acknowledgeEarly).toBe(false);
      // Nobody was told about that run: its record is gone again.
      expect(await runsCollection(api.database.db).countDocuments({ _id: lost._id })).toBe(0);
    } finally {
      await down.connection.close();
    }
    await api.temporal.workflow.getHandle(doc._id).terminate('test over');
  });

  it('a run acknowledged early is started behind the answer and its mark cleared', async () => {
    const t = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'transform' });
    const wf = await createWorkflow(api, user, {
      name: 'early',
      steps: [{ id: 's', template_id: t._id, config: { expression: 'data', data: '{{input}}' } }],
    });
    await startRun(api, user, wf); // Temporal answers this one: the next is acknowledged early
    const runId = await startRun(api, user, wf);
    await waitFor('the start behind the answer to be recorded', async () => {
      const run = await runsCollection(api.database.db).findOne({ _id: runId });
      return run !== null && run.temporal.run_id !== null && run.start_pending_at === undefined;
    });
    const run = await runsCollection(api.database.db).findOne({ _id: runId });
    expect(run!.temporal.run_id).toBe((await api.temporal.workflow.getHandle(runId).describe()).runId);
  });
});

describe('the sweep', () => {
  it('starts acknowledged runs left behind, clears the mark of runs that moved on, leaves recent starts alone', async () => {
    const runs = runsCollection(sweepDb.db);
    const stale = leftBehind('run_sweep_stale1', SWEEP_AFTER_MS + 5_000);
    const recent = leftBehind('run_sweep_recent1', 0);
    const cancelled = leftBehind('run_sweep_cancel1', SWEEP_AFTER_MS + 5_000, { status: 'cancelled' });
    await runs.insertMany([stale, recent, cancelled]);

    expect(await sweepUnstarted(deps())).toBe(1);
    expect(await executionExists(stale._id)).toBe(true);
    await waitFor('the swept start to be recorded', async () => {
      const run = await runs.findOne({ _id: stale._id });
      return run !== null && run.temporal.run_id !== null && run.start_pending_at === undefined;
    });
    // A cancelled run is never started; its mark goes.
    expect(await executionExists(cancelled._id)).toBe(false);
    expect((await runs.findOne({ _id: cancelled._id }))!.start_pending_at).toBeUndefined();
    // A start still within its own deadline is its own API's to finish.
    expect(await executionExists(recent._id)).toBe(false);
    expect((await runs.findOne({ _id: recent._id }))!.start_pending_at).toEqual(recent.start_pending_at);

    // Sweeping again starts nothing twice.
    expect(await sweepUnstarted(deps())).toBe(0);
    await api.temporal.workflow.getHandle(stale._id).terminate('test over');
  });

  it('a run Temporal refuses to start fails, saying why, instead of waiting forever', async () => {
    const refused = leftBehind('run_sweep_refused1', SWEEP_AFTER_MS + 5_000, {
      temporal: { namespace: api.config.TEMPORAL_NAMESPACE, task_queue: '', run_id: null },
    });
    await runsCollection(sweepDb.db).insertOne(refused);
    expect(await sweepUnstarted(deps())).toBe(0);
    const run = await runsCollection(sweepDb.db).findOne({ _id: refused._id });
    expect(run).toMatchObject({ status: 'failed', error: { reason: 'internal' } });
    expect(run!.error!.message).toContain('Temporal refused to start the run');
    expect(run!.start_pending_at).toBeUndefined();
  });

  it('a run beyond the owner’s concurrent-runs limit waits for a later sweep', async () => {
    const owner = 'usr_sweep_limit';
    const runs = runsCollection(sweepDb.db);
    const { start_pending_at: _, ...busy } = { ...leftBehind('run_sweep_busy1', 0), owner_id: owner };
    const waiting = { ...leftBehind('run_sweep_wait1', SWEEP_AFTER_MS + 5_000), owner_id: owner };
    await runs.insertMany([busy, waiting]);
    expect(await sweepUnstarted({ ...deps(), maxConcurrentRuns: 1 })).toBe(0);
    expect(await executionExists(waiting._id)).toBe(false);
    expect((await runs.findOne({ _id: waiting._id }))!.start_pending_at).toBeDefined();
  });
});

describe('around a start behind the answer', () => {
  it('a run cancelled before Temporal had it has its execution cancelled once Temporal does', async () => {
    const doc = leftBehind('run_cancel_race1', 0);
    await runsCollection(sweepDb.db).insertOne(doc);
    // POST …/cancel found no execution yet: the cancellation was recorded on the run alone.
    const end = { kind: 'cancelled', stepId: null, message: 'the run was cancelled before it started' } as const;
    await recordRunOutcome(sweepDb.db, doc._id, deriveOutcome([{ id: 'only', status: 'pending' }], end));
    await startExecution({ db: sweepDb.db, temporal: api.temporal, logger: silentLogger }, doc, doc.snapshot);
    const handle = api.temporal.workflow.getHandle(doc._id);
    await waitFor('Temporal to record the cancellation', async () => {
      const history = await handle.fetchHistory();
      return (history.events ?? []).some((e) => e.workflowExecutionCancelRequestedEventAttributes);
    });
    await handle.terminate('test over');
  });

  it('the status read leaves a run waiting for its start queued; a run recorded and never started is not_started', async () => {
    const quiet = new Date(Date.now() - 60_000);
    const runs = runsCollection(api.database.db);
    // Acknowledged just now, in a projection quiet long enough for the status read to ask Temporal.
    const waiting = { ...leftBehind('run_status_wait1', 0), updated_at: quiet };
    const { start_pending_at: _, ...orphan } = { ...leftBehind('run_status_orphan1', 0), updated_at: quiet };
    await runs.insertMany([waiting, orphan]);
    const status = async (runId: string) =>
      (await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth)).body.data as {
        status: string;
        error: { reason: string } | null;
      };
    expect(await status(waiting._id)).toMatchObject({ status: 'queued', error: null });
    expect(await status(orphan._id)).toMatchObject({ status: 'failed', error: { reason: 'not_started' } });
  });
});
