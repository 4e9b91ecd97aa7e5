/** The status record of refused tool calls: idempotent on retried writes, per step, capped, long targets cut. */
import { findRun, newRunDoc, runsCollection } from '../../db/runs';
import { EGRESS_DENIALS_SHOWN, recordEgressDenied } from '../../db/step-states';
import { agentStep, testSnapshot } from '../helpers/snapshots';
import { useTestDb } from '../helpers/stack';

describe('recordEgressDenied', () => {
  const database = useTestDb();

  it('records once per call (a retried write adds nothing), on its own step only', async () => {
    const runId = 'run_egress_once1';
    await runsCollection(database.db).insertOne(
      newRunDoc({
        snapshot: testSnapshot(runId, [agentStep('a', 'openai:m'), agentStep('b', 'openai:m')]),
        namespace: 'n',
        taskQueue: 'q',
      }),
    );
    const denial = { seq: 3, tool: 'send_email', target: 'x@evil.test' };
    expect(await recordEgressDenied(database.db, runId, 'b', denial)).toBe(true);
    expect(await recordEgressDenied(database.db, runId, 'b', denial)).toBe(true);
    await recordEgressDenied(database.db, runId, 'b', { ...denial, seq: 5, target: 'y'.repeat(5_000) });
    const run = await findRun(database.db, 'usr_owner', runId);
    expect(run?.steps[0]?.egress_denied).toBeUndefined();
    const denied = run?.steps[1]?.egress_denied ?? [];
    expect(denied.map((d) => d.seq)).toEqual([3, 5]);
    expect(denied[1]!.target.length).toBeLessThanOrEqual(200);
  });

  it(`keeps at most ${EGRESS_DENIALS_SHOWN} per step`, async () => {
    const runId = 'run_egress_cap01';
    await runsCollection(database.db).insertOne(
      newRunDoc({
        snapshot: testSnapshot(runId, [agentStep('a', 'openai:m'), agentStep('b', 'openai:m')]),
        namespace: 'n',
        taskQueue: 'q',
      }),
    );
    for (let seq = 0; seq < EGRESS_DENIALS_SHOWN + 5; seq++) {
      await recordEgressDenied(database.db, runId, 'a', { seq, tool: 'http_fetch', target: 'evil.test' });
    }
    const run = await findRun(database.db, 'usr_owner', runId);
    expect(run?.steps[0]?.egress_denied).toHaveLength(EGRESS_DENIALS_SHOWN);
  });
});
