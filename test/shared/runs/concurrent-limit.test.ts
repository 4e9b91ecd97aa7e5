/**
 * USER_MAX_CONCURRENT_RUNS as both start paths apply it (shared/runs/concurrent-limit.ts), against the real database:
 * the limit holds whatever order the records land in, including a record created earlier but inserted later (the
 * case a count of only the earlier-created runs let through: two backfilled scheduled fires both ran).
 */
import { newRunDoc, runsCollection, type RunDoc } from '../../../db/runs';
import { recordRunOutcome } from '../../../db/run-end';
import { holdsConcurrentSlot } from '../../../shared/runs/concurrent-limit';
import { testSnapshot } from '../../helpers/snapshots';
import { useTestDb } from '../../helpers/stack';

describe('holdsConcurrentSlot', () => {
  const database = useTestDb();

  const runOf = (id: string, owner: string, createdAt: Date): RunDoc =>
    newRunDoc({
      snapshot: testSnapshot(id, [], { owner_id: owner }),
      namespace: 'n',
      taskQueue: 'q',
      now: createdAt,
    });

  it('a run created earlier but recorded after a later one that took the last slot is refused', async () => {
    const owner = 'usr_limit_order';
    const earlier = runOf('run_limit_early1', owner, new Date(Date.now() - 1_000));
    const later = runOf('run_limit_later1', owner, new Date());
    await runsCollection(database.db).insertOne(later);
    expect(await holdsConcurrentSlot(database.db, later, 1)).toBe(true);
    await runsCollection(database.db).insertOne(earlier);
    expect(await holdsConcurrentSlot(database.db, earlier, 1)).toBe(false);
  });

  it('of a burst recorded at once, exactly `limit` hold a slot; a slot freed by an ended run is taken again', async () => {
    const owner = 'usr_limit_burst';
    const at = new Date();
    const runs = Array.from({ length: 6 }, (_, i) => runOf(`run_limit_burst${i}`, owner, at));
    await Promise.all(runs.map((r) => runsCollection(database.db).insertOne(r)));
    const verdicts = await Promise.all(
      runs.map(async (r) => {
        const holds = await holdsConcurrentSlot(database.db, r, 2);
        // A refused run leaves the runs in flight, as both callers make it do (failed, or its record removed).
        if (!holds) await recordRunOutcome(database.db, r._id, { status: 'failed', error: null });
        return holds;
      }),
    );
    expect(verdicts.filter(Boolean)).toHaveLength(2);
    // The first two by creation order (same instant: by id) are the ones that go ahead.
    expect(verdicts.slice(0, 2)).toEqual([true, true]);

    await recordRunOutcome(database.db, runs[0]!._id, { status: 'completed', error: null });
    const next = runOf('run_limit_burst9', owner, new Date());
    await runsCollection(database.db).insertOne(next);
    expect(await holdsConcurrentSlot(database.db, next, 2)).toBe(true);
  });
});
