/** Leased rate limiting against the real MongoDB store: never more than the budget across processes, few writes. */
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import { LeasedLimiter, leaseSize } from '../../../api/middleware/leased-limiter';
import { RATE_LIMIT_COLLECTION } from '../../../api/middleware/rate-limit';
import type { Database } from '../../../db/client';
import { openTestDb, testConfig } from '../../helpers/stack';

let database: Database;
beforeAll(async () => {
  database = await openTestDb(testConfig());
});
afterAll(async () => {
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
});

function store(points: number, prefix: string) {
  return new RateLimiterMongo({
    storeClient: database.db,
    tableName: RATE_LIMIT_COLLECTION,
    keyPrefix: prefix,
    points,
    duration: 60,
    disableIndexesCreation: true,
    inMemoryBlockOnConsumed: points + 1,
  });
}

async function tryConsume(l: LeasedLimiter, key: string): Promise<boolean> {
  try {
    await l.consume(key);
    return true;
  } catch (err) {
    if (err instanceof RateLimiterRes) return false;
    throw err;
  }
}

it('sizes leases at 2% of the budget, one point for small budgets', () => {
  expect(leaseSize(3)).toBe(1);
  expect(leaseSize(60)).toBe(1);
  expect(leaseSize(600)).toBe(12);
});

it('grants at most the budget across three processes, at least budget minus unused lease remainders', async () => {
  const points = 200;
  const lease = leaseSize(points);
  const processes = [0, 1, 2].map(() => {
    const s = store(points, 'lease-a');
    return { s, limiter: new LeasedLimiter(s, points), writes: jest.spyOn(s, 'consume') };
  });
  let granted = 0;
  let sharedCalls = 0;
  for (let i = 0; i < 300; i++) {
    const p = processes[i % 3]!;
    if (await tryConsume(p.limiter, 'k')) granted++;
    if (i === points - processes.length * lease - 1) {
      // Up to here every request was granted; without leases each one would have been a shared write.
      sharedCalls = processes.reduce((n, q) => n + q.writes.mock.calls.length, 0);
    }
  }
  expect(granted).toBeLessThanOrEqual(points);
  expect(granted).toBeGreaterThanOrEqual(points - processes.length * (lease - 1));
  expect(sharedCalls).toBeGreaterThan(0);
  expect(sharedCalls).toBeLessThanOrEqual(Math.ceil(points / lease));
  // Past the budget, refusals come from memory: the shared counter stops growing.
  const counter = await database.db.collection(RATE_LIMIT_COLLECTION).findOne({ key: 'lease-a:k' });
  expect(counter?.points).toBeLessThanOrEqual(points + processes.length * lease);
});

it('counts exactly with a small budget, and other keys keep theirs', async () => {
  const s = store(3, 'lease-b');
  const a = new LeasedLimiter(s, 3);
  const b = new LeasedLimiter(store(3, 'lease-b'), 3);
  const results = [
    await tryConsume(a, 'x'),
    await tryConsume(b, 'x'),
    await tryConsume(a, 'x'),
    await tryConsume(b, 'x'),
  ];
  expect(results).toEqual([true, true, true, false]);
  expect(await tryConsume(a, 'y')).toBe(true);
});

it('a burst of concurrent requests on a cold key takes leases one at a time, not one per request', async () => {
  const points = 600;
  const s = store(points, 'lease-burst');
  const limiter = new LeasedLimiter(s, points);
  const writes = jest.spyOn(s, 'consume');
  const granted = await Promise.all(Array.from({ length: 50 }, () => tryConsume(limiter, 'k')));
  expect(granted.every(Boolean)).toBe(true);
  // 50 requests need ceil(50 / 12) leases; one lease per request would have counted the whole budget.
  expect(writes).toHaveBeenCalledTimes(Math.ceil(50 / leaseSize(points)));
  const doc = await database.db.collection(RATE_LIMIT_COLLECTION).findOne({ key: 'lease-burst:k' });
  expect(doc?.points).toBe(Math.ceil(50 / leaseSize(points)) * leaseSize(points));
});
