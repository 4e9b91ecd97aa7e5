/**
 * The worker's reconciler (temporal/reconciler.ts) on the real stack: what the status read only answers, it
 * writes — the end of a run an operator terminated (and its completion webhook, which no workflow code started,
 * delivered once however many reconcilers run) and a run recorded but never started (outputs lost by a long database
 * outage: test/reliability/lost-projection.test.ts). Passes are driven directly; the worker entrypoint runs them every
 * RECONCILE_INTERVAL_SECONDS.
 */
import { newId } from '../../db/ids';
import { insertRun, newRunDoc, runsCollection } from '../../db/runs';
import { webhookDeliveriesCollection } from '../../db/webhook-deliveries';
import { Reconciler } from '../../temporal/reconciler';
import { webhookDeliveryId } from '../../domain/webhook';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { actionStep, testSnapshot } from '../helpers/snapshots';
import { silentLogger, uniqueId } from '../helpers/stack';
import { createWorkflow, startRun, waitForStatus } from '../helpers/workflows';

describe('reconciler', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack({ WEBHOOK_RETRY_INITIAL_SECONDS: '0.05' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  const reconciler = () =>
    new Reconciler({ db: g.api.database.db, temporal: g.api.temporal, logger: silentLogger, quietMs: 1_000 });
  const stored = (runId: string) => runsCollection(g.api.database.db).findOne({ _id: runId });
  /** As if nothing had been written for an hour. */
  const makeQuiet = (runId: string) =>
    runsCollection(g.api.database.db).updateOne(
      { _id: runId },
      { $set: { updated_at: new Date(Date.now() - 3600_000) } },
    );

  it('writes the end of a terminated run and delivers its webhook once, with two reconcilers at it', async () => {
    const path = `/${uniqueId('terminated')}`;
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('nap'),
      steps: [{ id: 'nap', template_id: g.tpl.delay._id, config: { seconds: 3600 } }],
      config: { callback_url: g.sink.url(path) },
    });
    const runId = await startRun(g.api, g.user, wf);
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'running');
    await g.api.temporal.workflow.getHandle(runId).terminate('operator test');
    await makeQuiet(runId);

    const passes = await Promise.all([reconciler().pass(), reconciler().pass()]);
    expect(passes.flatMap((p) => p.ended).filter((id) => id === runId)).toEqual([runId]);
    expect(passes.flatMap((p) => p.webhooks).filter((id) => id === runId)).toEqual([runId]);
    const doc = await stored(runId);
    expect(doc?.status).toBe('failed');
    expect(doc?.error).toMatchObject({ step_id: 'nap', reason: 'terminated' });

    await g.api.temporal.workflow.getHandle(webhookDeliveryId(runId)).result();
    const [request] = await g.sink.waitForRequests(1, path, 30_000);
    expect((JSON.parse(request!.text) as { type: string }).type).toBe('run.failed');
    // A later pass finds nothing to do: the run is terminal.
    expect((await reconciler().pass()).ended).not.toContain(runId);
    expect(g.sink.requestsTo(path)).toHaveLength(1);
    expect(await webhookDeliveriesCollection(g.api.database.db).countDocuments({ run_id: runId })).toBe(1);
  });

  it('marks a run recorded but never started failed (not_started), after a grace period only', async () => {
    const insert = async (now: Date) => {
      const runId = newId('run');
      const snapshot = testSnapshot(runId, [actionStep('a')], { owner_id: g.user.id });
      await insertRun(g.api.database.db, newRunDoc({ snapshot, namespace: 'default', taskQueue: 'q', now }));
      return runId;
    };
    const lost = await insert(new Date(Date.now() - 3600_000));
    // Quiet, but recorded only now: its start may still be under way.
    const recent = await insert(new Date());
    await runsCollection(g.api.database.db).updateOne(
      { _id: recent },
      { $set: { updated_at: new Date(Date.now() - 5_000) } },
    );

    const pass = await reconciler().pass();
    expect(pass.not_started).toContain(lost);
    expect(pass.not_started).not.toContain(recent);
    expect(await stored(lost)).toMatchObject({ status: 'failed', error: { reason: 'not_started' } });
    expect((await stored(recent))?.status).toBe('queued');
  });
});
