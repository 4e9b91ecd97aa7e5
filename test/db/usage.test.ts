/**
 * Usage counting (db/usage.ts) against the real MongoDB wire server: a call is counted once however its attempts end
 * (an attempt that dies after any of its writes is completed by the retry, never counted twice, also after its key has
 * left `pending`), every attempt counts on the day the call was first scheduled, calls landing at once on a new day
 * all count, totals are kept by group, and the cost of a call does not grow with the day's calls — the same commands
 * per call and a day document of the same size after 10 calls and after a million, counted rather than timed.
 */
import { BSON, MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import {
  countCall,
  earlierCount,
  tokensUsedOn,
  usageCallsCollection,
  usageCollection,
  utcDay,
  type CountedCall,
  type UsageDoc,
} from '../../db/usage';
import { testConfig, uniqueId, useTestDb } from '../helpers/stack';

/** The writes one call's counting sends (db/usage.ts's header): the add, then the call's document. */
const WRITES_PER_CALL = 2;

/**
 * `db` as an attempt sees it that dies after `writes` writes: the next write throws, as a worker killed at that point
 * would never send it.
 */
function dyingAfter(db: Db, writes: number): Db {
  let sent = 0;
  const collection = (name: string) => {
    const real = db.collection(name);
    return new Proxy(real, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop !== 'updateOne' && prop !== 'insertOne') return value.bind(target);
        return (...args: unknown[]) => {
          if (sent++ >= writes) return Promise.reject(new Error('the attempt died'));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  };
  return new Proxy(db, {
    get: (target, prop, receiver) => (prop === 'collection' ? collection : Reflect.get(target, prop, receiver)),
  });
}

const origin = { run_id: 'run_x', template_id: 'tpl_a', workflow_id: 'wf_a' };

function call(ownerId: string, callKey: string, tokens = 10, at = new Date()): CountedCall {
  return { ownerId, callKey, at, model: 'gpt-4.1-mini', origin, input_tokens: tokens - 1, output_tokens: 1 };
}

/** Attempt `attempt` of `c`, as the activity sends it: a retry first reads what an earlier attempt counted. */
function attemptOf(db: Db, c: CountedCall, attempt: number): Promise<boolean> {
  return countCall(db, c, earlierCount(db, { ownerId: c.ownerId, callKey: c.callKey, attempt }));
}

describe('usage counting', () => {
  const database = useTestDb();
  let monitored: MongoClient;
  const commands: CommandStartedEvent[] = [];
  beforeAll(async () => {
    monitored = new MongoClient(testConfig().MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => commands.push(e));
    await monitored.connect();
  });
  afterAll(() => monitored?.close());
  const counted = () => monitored.db(database.db.databaseName);
  const dayOf = async (owner: string) => (await usageCollection(database.db).findOne({ owner_id: owner }))!;

  it('counts a retried call once and distinct calls each', async () => {
    const owner = uniqueId('usr_');
    expect(await attemptOf(database.db, call(owner, 'run_a:s:1'), 1)).toBe(true);
    expect(await attemptOf(database.db, call(owner, 'run_a:s:1'), 2)).toBe(false);
    expect(await attemptOf(database.db, call(owner, 'run_a:s:3', 5), 1)).toBe(true);
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(15);
    expect(await usageCallsCollection(database.db).countDocuments({ owner_id: owner })).toBe(2);
  });

  it.each([0, 1, 2])('counts once a call whose first attempt died after %i of its writes', async (writes) => {
    const owner = uniqueId('usr_');
    const first = attemptOf(dyingAfter(database.db, writes), call(owner, 'run_b:s:2', 7), 1);
    if (writes < WRITES_PER_CALL) await expect(first).rejects.toThrow('the attempt died');
    // Past its last write the attempt ended well, but its answer was lost: Temporal retries it all the same.
    else await first;
    // A later call of the same worker takes the first call's key out of `pending` when it can.
    await attemptOf(database.db, call(owner, 'run_b:s:4', 3), 1);
    await attemptOf(database.db, call(owner, 'run_b:s:2', 7), 2);
    // A third attempt (the second's answer lost too) changes nothing either.
    expect(await attemptOf(database.db, call(owner, 'run_b:s:2', 7), 3)).toBe(false);
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(10);
    expect(await dayOf(owner)).toMatchObject({ tokens: 10, input_tokens: 8, output_tokens: 2, call_count: 2 });
    const calls = await usageCallsCollection(database.db).find({ owner_id: owner }).toArray();
    expect(calls.map((c) => c._id).sort()).toEqual([`${owner}:run_b:s:2`, `${owner}:run_b:s:4`]);
  });

  it('counts a retry once after the call left pending', async () => {
    const owner = uniqueId('usr_');
    await attemptOf(database.db, call(owner, 'run_f:s:1', 4), 1);
    // The next calls take it out of `pending` (only once its call document landed).
    await attemptOf(database.db, call(owner, 'run_f:s:2', 4), 1);
    await attemptOf(database.db, call(owner, 'run_f:s:3', 4), 1);
    expect(Object.keys((await dayOf(owner)).pending)).toHaveLength(1);
    expect(await attemptOf(database.db, call(owner, 'run_f:s:1', 4), 2)).toBe(false);
    expect(await dayOf(owner)).toMatchObject({ tokens: 12, call_count: 3 });
  });

  it('counts every attempt on the day the call was first scheduled', async () => {
    const owner = uniqueId('usr_');
    // Scheduled in the evening; the retry runs after midnight with the same scheduling time.
    const evening = new Date('2026-12-01T23:59:59.000Z');
    await expect(attemptOf(dyingAfter(database.db, 1), call(owner, 'run_c:s:1', 9, evening), 1)).rejects.toThrow();
    await attemptOf(database.db, call(owner, 'run_c:s:1', 9, evening), 2);
    expect(await tokensUsedOn(database.db, owner, evening)).toBe(9);
    expect(await tokensUsedOn(database.db, owner, new Date('2026-12-02T00:00:01.000Z'))).toBe(0);
  });

  it('counts each of many calls landing at once on a new day', async () => {
    const owner = uniqueId('usr_');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => attemptOf(database.db, call(owner, `run_g:s:${i}`, 2), 1)),
    );
    expect(results.every(Boolean)).toBe(true);
    expect(await dayOf(owner)).toMatchObject({ tokens: 40, call_count: 20 });
  });

  it('goes on counting a day recorded by the build before, whose pending keys were an array', async () => {
    const owner = uniqueId('usr_');
    const day = utcDay(new Date());
    await usageCollection(database.db).insertOne({
      _id: `${owner}:${day}`,
      owner_id: owner,
      day,
      tokens: 50,
      call_count: 5,
      pending: [] as unknown as Record<string, true>,
      expires_at: new Date(Date.now() + 86_400_000),
    } as UsageDoc);
    expect(await attemptOf(database.db, call(owner, 'run_i:s:1', 10), 1)).toBe(true);
    expect(await attemptOf(database.db, call(owner, 'run_i:s:1', 10), 2)).toBe(false);
    expect(await dayOf(owner)).toMatchObject({ tokens: 60, call_count: 6 });
  });

  it('keeps the totals by model, template and workflow', async () => {
    const owner = uniqueId('usr_');
    await attemptOf(database.db, call(owner, 'run_h:s:1', 10), 1);
    await attemptOf(database.db, { ...call(owner, 'run_h:s:3', 10), model: 'other.model' }, 1);
    await attemptOf(database.db, { ...call(owner, 'run_h:s:5', 20), model: 'other.model' }, 1);
    const groups = Object.values((await dayOf(owner)).groups).sort((a, b) => a.calls - b.calls);
    expect(groups).toEqual([
      { model: 'gpt-4.1-mini', template_id: 'tpl_a', workflow_id: 'wf_a', input_tokens: 9, output_tokens: 1, calls: 1 },
      { model: 'other.model', template_id: 'tpl_a', workflow_id: 'wf_a', input_tokens: 28, output_tokens: 2, calls: 2 },
    ]);
  });

  it('costs the same commands and document sizes per call after 10 calls as after 2 000 and a million', async () => {
    const owner = uniqueId('usr_');
    /** Commands and the size of the day's document for `n` more calls, from `from` on. */
    const measure = async (from: number, n: number) => {
      commands.length = 0;
      for (let i = from; i < from + n; i++) await attemptOf(counted(), call(owner, `run_d:s:${i}`, 1), 1);
      const byName = commands.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`);
      return {
        perCall: byName.length / n,
        names: [...new Set(byName)].sort(),
        dayBytes: BSON.calculateObjectSize(await dayOf(owner)),
      };
    };
    const early = await measure(0, 10);
    // A day's worth of calls in between, sent in bulk as the counting would leave them (this test cannot wait for a
    // million one by one): a call document each and the day's totals.
    const bulk = 2_000;
    const day = utcDay(new Date());
    await usageCallsCollection(database.db).insertMany(
      Array.from({ length: bulk }, (_, i) => ({
        _id: `${owner}:run_e:s:${i}`,
        owner_id: owner,
        day,
        run_id: 'run_e',
        model: 'gpt-4.1-mini',
        template_id: 'tpl_a',
        workflow_id: 'wf_a',
        input_tokens: 0,
        output_tokens: 1,
        expires_at: new Date(Date.now() + 86_400_000),
      })),
    );
    const group = Object.keys((await dayOf(owner)).groups)[0]!;
    const grow = (calls: number, tokens: number) =>
      usageCollection(database.db).updateOne(
        { owner_id: owner },
        { $inc: { tokens, output_tokens: tokens, call_count: calls, [`groups.${group}.calls`]: calls } },
      );
    await grow(bulk, bulk);
    const late = await measure(10, 10);
    // Then calls counted one by one: their documents as the calls themselves leave them.
    await measure(20, 100);
    const latest = await measure(120, 10);
    // A million calls' day: the totals and the counts grow into 64-bit numbers, and that is all that grows.
    await grow(1_000_000 - (bulk + 130), 5_000_000_000);
    const million = await measure(130, 10);

    for (const m of [early, late, latest, million]) {
      expect(m.perCall).toBe(WRITES_PER_CALL);
      expect(m.names).toEqual(['insert usage_calls', 'update usage']);
    }
    // The day's document holds totals, not the calls: its size does not change with their number (`pending` holds
    // the one call before the last, whose key leaves with the next add).
    expect(late.dayBytes).toBe(early.dayBytes);
    expect(latest.dayBytes).toBe(late.dayBytes);
    expect(million.dayBytes).toBeLessThanOrEqual(early.dayBytes + 24);
    const final = await dayOf(owner);
    expect(final).toMatchObject({ tokens: 5_000_000_000 + bulk + 140, call_count: 1_000_010 });
    expect(Object.keys(final.pending)).toHaveLength(1);
    const one = await usageCallsCollection(database.db).findOne({ _id: `${owner}:run_d:s:139` });
    expect(BSON.calculateObjectSize(one!)).toBeLessThan(250);
  });
});
