/**
 * Usage counting (db/usage.ts) against the real MongoDB wire server: a call is counted once however its attempts end
 * (an attempt that dies after any of its writes is completed by the retry, never counted twice), a retry after
 * midnight counts on its first day, and the cost of a call does not grow with the day's calls — the same commands per
 * call and documents of the same size after 10 calls and after a day's worth, counted rather than timed.
 */
import { BSON, MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import { addCallTokens, tokensUsedOn, usageCallsCollection, usageCollection, utcDay } from '../../db/usage';
import { testConfig, uniqueId, useTestDb } from '../helpers/stack';

/** The writes one call's counting sends (db/usage.ts's header): claim, add, mark counted, leave pending. */
const WRITES_PER_CALL = 4;

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
        if (prop !== 'updateOne' && prop !== 'findOneAndUpdate') return value.bind(target);
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

  const call = (ownerId: string, callKey: string, tokens = 10, at = new Date()) => ({ ownerId, callKey, tokens, at });

  it('counts a retried call once and distinct calls each', async () => {
    const owner = uniqueId('usr_');
    expect(await addCallTokens(database.db, call(owner, 'run_a:s:1'))).toBe(true);
    expect(await addCallTokens(database.db, call(owner, 'run_a:s:1'))).toBe(false);
    expect(await addCallTokens(database.db, call(owner, 'run_a:s:3', 5))).toBe(true);
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(15);
  });

  it.each([0, 1, 2, 3])('counts once a call whose first attempt died after %i of its writes', async (writes) => {
    const owner = uniqueId('usr_');
    const first = addCallTokens(dyingAfter(database.db, writes), call(owner, 'run_b:s:2', 7));
    await expect(first).rejects.toThrow('the attempt died');
    await addCallTokens(database.db, call(owner, 'run_b:s:2', 7));
    // A third attempt (the second's answer lost too) changes nothing either.
    expect(await addCallTokens(database.db, call(owner, 'run_b:s:2', 7))).toBe(false);
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(7);
    const day = await usageCollection(database.db).findOne({ owner_id: owner });
    expect(day).toMatchObject({ tokens: 7, call_count: 1, pending: [] });
  });

  it('counts a call retried after midnight on the day of its first attempt', async () => {
    const owner = uniqueId('usr_');
    const evening = new Date('2026-12-01T23:59:59.000Z');
    const morning = new Date('2026-12-02T00:00:01.000Z');
    await expect(addCallTokens(dyingAfter(database.db, 1), call(owner, 'run_c:s:1', 9, evening))).rejects.toThrow();
    await addCallTokens(database.db, call(owner, 'run_c:s:1', 9, morning));
    expect(await tokensUsedOn(database.db, owner, evening)).toBe(9);
    expect(await tokensUsedOn(database.db, owner, morning)).toBe(0);
  });

  it('costs the same commands and document sizes per call after 10 calls as after 2 000 and a million', async () => {
    const owner = uniqueId('usr_');
    const dayDoc = async () => (await usageCollection(database.db).findOne({ owner_id: owner }))!;
    /** Commands and the size of the day's document for `n` more calls, from `from` on. */
    const measure = async (from: number, n: number) => {
      commands.length = 0;
      for (let i = from; i < from + n; i++) await addCallTokens(counted(), call(owner, `run_d:s:${i}`, 1));
      const byName = commands.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`);
      return {
        perCall: byName.length / n,
        names: [...new Set(byName)].sort(),
        dayBytes: BSON.calculateObjectSize(await dayDoc()),
      };
    };
    const early = await measure(0, 10);
    // A day's worth of calls in between, sent in bulk as the counting would leave them (this test cannot wait for a
    // million one by one): a counted call document each and the day's total.
    const bulk = 2_000;
    const day = utcDay(new Date());
    await usageCallsCollection(database.db).insertMany(
      Array.from({ length: bulk }, (_, i) => ({
        _id: `${owner}:run_e:s:${i}`,
        owner_id: owner,
        day,
        tokens: 1,
        state: 'counted' as const,
        expires_at: new Date(Date.now() + 86_400_000),
      })),
    );
    await usageCollection(database.db).updateOne({ owner_id: owner }, { $inc: { tokens: bulk, call_count: bulk } });
    const late = await measure(10, 10);
    // Then calls counted one by one: their documents as the calls themselves leave them.
    await measure(20, 100);
    const latest = await measure(120, 10);
    // A million calls' day: the total and the count grow into 64-bit numbers, and that is all that grows.
    await usageCollection(database.db).updateOne(
      { owner_id: owner },
      { $inc: { tokens: 5_000_000_000, call_count: 1_000_000 - (bulk + 130) } },
    );
    const million = await measure(130, 10);

    for (const m of [early, late, latest, million]) {
      expect(m.perCall).toBe(WRITES_PER_CALL);
      expect(m.names).toEqual(['findAndModify usage_calls', 'update usage', 'update usage_calls']);
    }
    // The day's document holds a total, not the calls: its size does not change with their number.
    expect(late.dayBytes).toBe(early.dayBytes);
    expect(latest.dayBytes).toBe(late.dayBytes);
    expect(million.dayBytes).toBeLessThanOrEqual(early.dayBytes + 8);
    expect(await dayDoc()).toMatchObject({ tokens: 5_000_000_000 + bulk + 140, call_count: 1_000_010, pending: [] });
    const one = await usageCallsCollection(database.db).findOne({ _id: `${owner}:run_d:s:139` });
    expect(BSON.calculateObjectSize(one!)).toBeLessThan(200);
  });
});
