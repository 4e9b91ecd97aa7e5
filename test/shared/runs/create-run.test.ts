/**
 * The one way runs are created (shared/runs/create-run.ts), against the real database, with the Temporal start as the
 * caller's step (the seam the API fills with its start, the schedule with none): a repeated request never waits for
 * the first one — it starts the recorded run itself (Temporal's workflow-id uniqueness makes that one execution) —
 * a refused start leaves nothing behind, and a retried attempt with a fixed run id finds its record.
 */
import { claimKey, findClaim } from '../../../db/idempotency';
import { runsCollection, type RunDoc } from '../../../db/runs';
import { createRun, RunRefusedError, type CreateRunRequest } from '../../../shared/runs/create-run';
import { testSnapshot } from '../../helpers/snapshots';
import { testConfig, uniqueId, useTestDb } from '../../helpers/stack';

describe('createRun', () => {
  const database = useTestDb();
  const config = testConfig({ USER_MAX_CONCURRENT_RUNS: '2' });
  const deps = () => ({ db: database.db, config });

  /** A start request of `owner`; `starts` records every Temporal start asked for, by run id. */
  const request = (owner: string, starts: string[], extra: Partial<CreateRunRequest> = {}): CreateRunRequest => ({
    ownerId: owner,
    prepare: async (runId) => ({ snapshot: testSnapshot(runId, [], { owner_id: owner }) }),
    onRefused: 'remove',
    start: async (doc: RunDoc) => {
      starts.push(doc._id);
    },
    ...extra,
  });

  it('a repeat while the first request is between its record and its start starts the run itself, at once', async () => {
    const owner = uniqueId('usr_');
    const starts: string[] = [];
    const idempotency = { key: 'k', requestHash: 'h' };
    let releaseFirst!: () => void;
    let firstReachedStart!: () => void;
    const atStart = new Promise<void>((resolve) => (firstReachedStart = resolve));
    const first = createRun(
      deps(),
      request(owner, starts, {
        idempotency,
        start: async (doc) => {
          firstReachedStart();
          await new Promise<void>((resolve) => (releaseFirst = resolve));
          starts.push(doc._id);
        },
      }),
    );
    await atStart;
    // The first is held before Temporal: the repeat does not wait for it (it would wait forever here).
    const repeat = await createRun(deps(), request(owner, starts, { idempotency }));
    expect(repeat.created).toBe(false);
    expect(starts).toEqual([repeat.doc._id]);
    expect(await runsCollection(database.db).findOne({ _id: repeat.doc._id })).toMatchObject({ start_claimed: true });

    releaseFirst();
    const done = await first;
    expect(done).toMatchObject({ created: true, doc: { _id: repeat.doc._id } });
    // Both asked Temporal for the same workflow id: one execution (the second start finds the first).
    expect(starts).toEqual([repeat.doc._id, repeat.doc._id]);
    expect(await runsCollection(database.db).countDocuments({ owner_id: owner })).toBe(1);
  });

  it('a repeat whose key is claimed but whose run is not recorded yet answers in flight; another body is refused', async () => {
    const owner = uniqueId('usr_');
    await claimKey(database.db, { ownerId: owner, key: 'k', runId: 'run_notyet000001', requestHash: 'h' });
    const starts: string[] = [];
    const inFlight = createRun(deps(), request(owner, starts, { idempotency: { key: 'k', requestHash: 'h' } }));
    await expect(inFlight).rejects.toMatchObject({ reason: 'in_flight' });
    const other = createRun(deps(), request(owner, starts, { idempotency: { key: 'k', requestHash: 'other' } }));
    await expect(other).rejects.toMatchObject({ reason: 'idempotency_mismatch' });
    expect(starts).toEqual([]);
  });

  it('a start beyond the concurrent-runs limit leaves no record and gives its key up', async () => {
    const owner = uniqueId('usr_');
    const starts: string[] = [];
    await createRun(deps(), request(owner, starts));
    await createRun(deps(), request(owner, starts));
    const refused = createRun(deps(), request(owner, starts, { idempotency: { key: 'k3', requestHash: 'h' } }));
    await expect(refused).rejects.toBeInstanceOf(RunRefusedError);
    await expect(refused).rejects.toMatchObject({ reason: 'concurrent_runs_exceeded' });
    expect(starts).toHaveLength(2);
    expect(await runsCollection(database.db).countDocuments({ owner_id: owner })).toBe(2);
    expect(await findClaim(database.db, owner, 'k3')).toBeNull();
  });

  it('a retried attempt with a fixed run id (a schedule) finds the record the first wrote', async () => {
    const owner = uniqueId('usr_');
    const runId = uniqueId('run_');
    let charged = 0;
    const charge = async () => {
      charged++;
    };
    const fixed = { runId, onRefused: 'keep' as const, start: undefined, charge };
    const first = await createRun(deps(), request(owner, [], fixed));
    const retry = await createRun(deps(), request(owner, [], fixed));
    expect(first.created).toBe(true);
    expect(retry).toMatchObject({ created: false, doc: { _id: runId } });
    expect(charged).toBe(2);
    expect(await runsCollection(database.db).countDocuments({ owner_id: owner })).toBe(1);
  });
});
