/**
 * The embedded server's index planner (devstack/mongo/OrderedIndex.java) against the server's own full scan: the same
 * documents in a collection with the service's kinds of indexes and in one with none, the same random queries (pins,
 * `$in`, ranges, `$or`, sorts served by an index walk or not, skip and limit) and random writes in between, and the
 * same answers, to `find` and to an aggregation led by `$match`. Then unique indexes refuse duplicates as before, and
 * after a restart (indexes rebuilt from the documents) the answers still agree. Skipped where a real mongod serves the
 * suite.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { MongoClient, MongoServerError, type Collection, type Document, type Filter, type Sort } from 'mongodb';
import { ensureMongoServer } from '../../devstack/install';
import { startMongo, type MongoServer } from '../../devstack/servers';

const embedded = ensureMongoServer(() => undefined).kind === 'java';
const describeEmbedded = embedded ? describe : describe.skip;

const OWNERS = ['u1', 'u2', 'u3'];
const STATUSES = ['queued', 'running', 'completed', 'failed'];
const DAYS = [1, 2, 3, 4, 5].map((d) => new Date(Date.UTC(2026, 0, d)));

interface Doc extends Document {
  _id: string;
}

const docArb = (i: number) =>
  fc
    .record(
      {
        // System templates have owner_id null; some documents lack it.
        owner_id: fc.constantFrom<string | null>(...OWNERS, ...OWNERS, null),
        status: fc.constantFrom(...STATUSES),
        created_at: fc.constantFrom(...DAYS),
        // Ints and doubles of the same value, null and missing: equal as the server compares them.
        n: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom(1.5, 2.0, null)),
        parent_run_id: fc.constantFrom(null, 'run_p'),
        // A sparse index's field: a date, null or missing.
        due: fc.constantFrom<Date | null>(...DAYS, null),
      },
      { requiredKeys: ['created_at'] },
    )
    .map((d): Doc => ({ _id: `run_${String(i).padStart(4, '0')}`, ...d }));

const pick = <T>(values: T[]) => fc.constantFrom(...values);
const idArb = fc.integer({ min: 0, max: 80 }).map((i) => `run_${String(i).padStart(4, '0')}`);

const filterArb: fc.Arbitrary<Filter<Doc>> = fc
  .record(
    {
      owner_id: fc.oneof(
        pick<string | null>([...OWNERS, null]),
        fc.record({ $in: fc.subarray<string | null>([...OWNERS, null], { minLength: 1 }) }),
      ),
      status: fc.oneof(
        pick(STATUSES),
        fc.record({ $in: fc.subarray(STATUSES, { minLength: 1 }) }),
        fc.record({ $nin: fc.subarray(STATUSES, { minLength: 1 }) }),
      ),
      created_at: fc.oneof(
        pick(DAYS),
        fc.record({ $gte: pick(DAYS) }),
        fc.record({ $lt: pick(DAYS) }),
        fc.record({ $gt: pick(DAYS), $lte: pick(DAYS) }),
      ),
      n: fc.oneof(
        pick([0, 1, 2, 2.0, 1.5, null]),
        fc.record({ $gt: pick([0, 1, 1.5]) }),
        fc.record({ $eq: pick([2]) }),
      ),
      _id: fc.oneof(idArb, fc.record({ $in: fc.array(idArb, { maxLength: 4 }) }), fc.record({ $gt: idArb })),
      parent_run_id: pick([null, 'run_p']),
      due: fc.oneof(
        pick<Date | null>([DAYS[1]!, null]),
        fc.record({ $lte: pick(DAYS) }),
        fc.record({ $gt: pick(DAYS) }),
      ),
    },
    { requiredKeys: [] },
  )
  .chain((f) =>
    fc.constantFrom<Filter<Doc>>(
      f as Filter<Doc>,
      { ...f, $or: [{ created_at: { $lt: DAYS[2] } }, { n: { $gte: 2 } }] } as Filter<Doc>,
      // A branch per side of a range: the planner narrows by the range covering both.
      { $and: [f, { $or: [{ created_at: { $lte: DAYS[1] } }, { created_at: DAYS[3] }] }] } as Filter<Doc>,
    ),
  );

// Every sort ends in _id, so an answer has one right order.
const sortArb: fc.Arbitrary<Sort | undefined> = fc.constantFrom<Sort | undefined>(
  undefined,
  { created_at: -1, _id: -1 },
  { created_at: 1, _id: 1 },
  { status: 1, created_at: -1, _id: -1 },
  { n: 1, _id: 1 },
  { due: 1, _id: 1 },
  { _id: -1 },
  { created_at: -1, _id: 1 },
);

const queryArb = fc.record({
  filter: filterArb,
  sort: sortArb,
  skip: fc.integer({ min: 0, max: 2 }),
  limit: fc.integer({ min: 1, max: 6 }),
});

type Query = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

/** The service's own query shapes, asked after every write besides the random ones: index walks in both directions. */
const SHAPES: Query[] = [
  { filter: { owner_id: 'u1' }, sort: { created_at: -1, _id: -1 }, skip: 0, limit: 5 },
  { filter: { owner_id: 'u2' }, sort: { created_at: 1, _id: 1 }, skip: 1, limit: 4 },
  { filter: { owner_id: 'u1', status: 'queued' }, sort: { created_at: -1, _id: -1 }, skip: 0, limit: 3 },
  {
    filter: { owner_id: 'u3', status: { $in: ['queued', 'running'] } },
    sort: { created_at: -1, _id: -1 },
    skip: 0,
    limit: 3,
  },
  { filter: { owner_id: 'u2', created_at: { $lt: DAYS[3] } }, sort: { created_at: -1, _id: -1 }, skip: 0, limit: 6 },
  {
    filter: { owner_id: 'u1', status: { $in: ['queued', 'running'] }, parent_run_id: null },
    sort: undefined,
    skip: 0,
    limit: 1,
  },
  { filter: { n: { $gte: 1 } }, sort: { n: 1, _id: 1 }, skip: 0, limit: 6 },
  // GET /agents: the system's and the caller's, in creation order.
  { filter: { owner_id: { $in: [null, 'u1'] } }, sort: { created_at: 1, _id: 1 }, skip: 0, limit: 6 },
  { filter: { owner_id: null }, sort: { created_at: -1, _id: -1 }, skip: 0, limit: 3 },
  // A sparse index leaves out documents without its field: it cannot answer for null.
  { filter: { code: null }, sort: { _id: 1 }, skip: 0, limit: 6 },
  // ...but it can for a range, which never matches them.
  { filter: { due: { $lte: DAYS[2] } }, sort: { due: 1, _id: 1 }, skip: 0, limit: 6 },
  { filter: { due: { $gt: DAYS[0] } }, sort: { due: 1, _id: 1 }, skip: 0, limit: 6 },
  // Keyset paging (db/paging.ts): the filter and the cursor's condition in $and.
  {
    filter: {
      $and: [
        { owner_id: 'u1' },
        { $or: [{ created_at: { $lt: DAYS[3] } }, { created_at: DAYS[3], _id: { $lt: 'run_0040' } }] },
      ],
    },
    sort: { created_at: -1, _id: -1 },
    skip: 0,
    limit: 4,
  },
  {
    filter: {
      $and: [
        { owner_id: 'u2', status: 'queued' },
        { $or: [{ created_at: { $gt: DAYS[1] } }, { created_at: DAYS[1], _id: { $gt: 'run_0010' } }] },
      ],
    },
    sort: { created_at: 1, _id: 1 },
    skip: 0,
    limit: 4,
  },
  { filter: { _id: { $gt: 'run_0030', $lte: 'run_0050' } }, sort: { _id: -1 }, skip: 0, limit: 5 },
];

const writeArb = fc.oneof(
  fc.record({ kind: fc.constant('status' as const), owner: pick(OWNERS), to: pick(STATUSES) }),
  fc.record({ kind: fc.constant('delete' as const), id: idArb }),
  fc.record({ kind: fc.constant('unset' as const), id: idArb }),
  fc.record({ kind: fc.constant('day' as const), id: idArb, day: pick(DAYS) }),
);

type Write = typeof writeArb extends fc.Arbitrary<infer T> ? T : never;

describeEmbedded('the embedded server plans queries on indexes (devstack/mongo)', () => {
  let dir: string;
  let server: MongoServer;
  let client: MongoClient;
  let indexed: Collection<Doc>;
  let scanned: Collection<Doc>;
  let docCounter = 0;

  const open = async () => {
    server = await startMongo(
      { port: 0, dataDir: path.join(dir, 'db'), logFile: path.join(dir, 'mongo.log') },
      () => {},
    );
    client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 5_000 });
    indexed = client.db('planner').collection<Doc>('indexed');
    scanned = client.db('planner').collection<Doc>('scanned');
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-planner-'));
    await open();
    // The runs collection's kinds of indexes (db/indexes.ts), a plain one, and a unique sparse one.
    await indexed.createIndexes([
      { key: { owner_id: 1, status: 1, created_at: -1, _id: -1 }, name: 'by_owner_status_created' },
      { key: { owner_id: 1, created_at: -1, _id: -1 }, name: 'by_owner_created' },
      { key: { n: 1 }, name: 'by_n' },
      { key: { code: 1 }, unique: true, sparse: true, name: 'code_unique' },
      { key: { due: 1 }, sparse: true, name: 'by_due' },
    ]);
    const docs = fc.sample(fc.tuple(...Array.from({ length: 60 }, (_, i) => docArb(i))), { numRuns: 1, seed: 7 })[0]!;
    docCounter = docs.length;
    await indexed.insertMany(docs.map((d) => ({ ...d })));
    await scanned.insertMany(docs.map((d) => ({ ...d })));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.process.stop(5_000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const answers = async (q: Query) => {
    const run = async (c: Collection<Doc>) => {
      // Without a sort the order is the server's to choose: compare the sets (and leave skip/limit out).
      if (!q.sort) return (await c.find(q.filter).toArray()).sort((a, b) => (a._id < b._id ? -1 : 1));
      return c.find(q.filter).sort(q.sort).skip(q.skip).limit(q.limit).toArray();
    };
    return { indexed: await run(indexed), scanned: await run(scanned) };
  };

  // An aggregation led by `$match` reads through the planner (a map's execution counts, `countDocuments`): its groups
  // against the same groups counted here from the full scan's documents.
  const grouped = async (q: Query) => {
    const indexedGroups = await indexed
      .aggregate([{ $match: q.filter }, { $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    const counts = new Map<string | null, number>();
    for (const d of await scanned.find(q.filter).toArray()) {
      const status = typeof d.status === 'string' ? d.status : null;
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    // `$sort` puts null (no status) first.
    const scannedGroups = [...counts]
      .map(([_id, n]) => ({ _id, n }))
      .sort((a, b) => (a._id === b._id ? 0 : a._id === null ? -1 : b._id === null ? 1 : a._id < b._id ? -1 : 1));
    return { indexed: indexedGroups, scanned: scannedGroups };
  };

  const applyWrite = async (w: Write) => {
    for (const c of [indexed, scanned]) {
      switch (w.kind) {
        case 'status':
          await c.updateMany({ owner_id: w.owner, status: { $ne: w.to } }, { $set: { status: w.to } });
          break;
        case 'delete':
          await c.deleteOne({ _id: w.id });
          break;
        case 'unset':
          await c.updateOne({ _id: w.id }, { $unset: { status: '' }, $set: { n: 3 } });
          break;
        case 'day':
          await c.updateOne({ _id: w.id }, { $set: { created_at: w.day } });
          break;
      }
    }
  };

  it('answers random queries between random writes exactly as a full scan does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(writeArb, fc.array(queryArb, { minLength: 1, maxLength: 4 })), { maxLength: 3 }),
        async (rounds) => {
          for (const [write, queries] of rounds) {
            await applyWrite(write);
            const extra: Doc = {
              _id: `run_${String(docCounter++).padStart(4, '0')}`,
              owner_id: 'u2',
              status: 'queued',
              created_at: DAYS[1]!,
              n: 2,
            };
            await indexed.insertOne({ ...extra });
            await scanned.insertOne({ ...extra });
            for (const q of [...SHAPES, ...queries]) {
              const { indexed: a, scanned: b } = await answers(q);
              expect({ q, docs: a }).toEqual({ q, docs: b });
              const { indexed: ga, scanned: gb } = await grouped(q);
              expect({ q, groups: ga }).toEqual({ q, groups: gb });
            }
          }
        },
      ),
      { numRuns: 60, seed: 42 },
    );
  }, 240_000);

  it('refuses duplicates of a unique index on insert and update, and lets documents without a sparse key be', async () => {
    await indexed.insertOne({ _id: 'code_a', owner_id: 'u9', created_at: DAYS[0]!, code: 'A' });
    await indexed.insertOne({ _id: 'code_none_1', owner_id: 'u9', created_at: DAYS[0]! });
    await indexed.insertOne({ _id: 'code_none_2', owner_id: 'u9', created_at: DAYS[0]! });
    const dup = await indexed
      .insertOne({ _id: 'code_b', owner_id: 'u9', created_at: DAYS[0]!, code: 'A' })
      .catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(MongoServerError);
    expect((dup as MongoServerError).code).toBe(11000);
    const moved = await indexed.updateOne({ _id: 'code_none_1' }, { $set: { code: 'A' } }).catch((e: unknown) => e);
    expect((moved as MongoServerError).code).toBe(11000);
    // A document may keep its own key, and a freed key is free.
    await indexed.updateOne({ _id: 'code_a' }, { $set: { code: 'A', owner_id: 'u8' } });
    await indexed.deleteOne({ _id: 'code_a' });
    await indexed.updateOne({ _id: 'code_none_1' }, { $set: { code: 'A' } });
    expect(await indexed.find({ code: 'A' }).toArray()).toEqual([expect.objectContaining({ _id: 'code_none_1' })]);
  });

  it('projects top-level fields as mongod does, and leaves the stored documents whole', async () => {
    const db = client.db('planner_projection');
    const things = db.collection<Doc>('things');
    const stored: Doc = {
      _id: 'p1',
      owner_id: 'u1',
      snapshot: { steps: [{ id: 's1', config: { deep: [1, 2, { x: 'y' }] } }] },
      status: 'completed',
      steps: [{ id: 's1', status: 'completed' }],
      created_at: DAYS[0]!,
    };
    await things.insertOne({ ...stored });
    const { snapshot: _dropped, ...withoutSnapshot } = stored;
    void _dropped;
    const only = (keys: string[]) => Object.fromEntries(Object.entries(stored).filter(([k]) => keys.includes(k)));
    const cases: [Document, Document][] = [
      [{ snapshot: 0 }, withoutSnapshot],
      [{ snapshot: false, _id: 0 }, only(['owner_id', 'status', 'steps', 'created_at'])],
      [{ _id: 1 }, only(['_id'])],
      [{ status: 1, steps: 1 }, only(['_id', 'status', 'steps'])],
      [{ _id: 0, status: true, missing: 1 }, only(['status'])],
      // A path stays the library's.
      [{ 'snapshot.steps': 1 }, { _id: 'p1', snapshot: stored.snapshot }],
    ];
    for (const [projection, expected] of cases) {
      const found = await things.find({ owner_id: 'u1' }, { projection }).toArray();
      expect({ projection, found }).toEqual({ projection, found: [expected] });
      // The same through the `_id` fast path.
      expect({ projection, found: await things.findOne({ _id: 'p1' }, { projection }) }).toEqual({
        projection,
        found: expected,
      });
    }
    // Field order is the document's (mongod's), not the projection's.
    expect(Object.keys((await things.findOne({ _id: 'p1' }, { projection: { steps: 1, status: 1 } }))!)).toEqual([
      '_id',
      'status',
      'steps',
    ]);
    expect(await things.findOne({ _id: 'p1' })).toEqual(stored);
    const mixed = await things
      .find({}, { projection: { status: 1, snapshot: 0 } })
      .toArray()
      .catch((e: unknown) => e);
    expect(mixed).toBeInstanceOf(MongoServerError);
  });

  it('drops a collection and a database with their indexes, and makes them again', async () => {
    const db = client.db('planner_drop');
    const things = db.collection<Doc>('things');
    await things.createIndex({ owner_id: 1, created_at: -1 }, { name: 'by_owner' });
    await things.insertMany([{ _id: 'a', owner_id: 'u1', created_at: DAYS[0]! }]);
    await things.drop();
    await things.insertOne({ _id: 'b', owner_id: 'u1', created_at: DAYS[1]! });
    expect(await things.find({ owner_id: 'u1' }).toArray()).toEqual([expect.objectContaining({ _id: 'b' })]);
    await db.dropDatabase();
    expect(await things.countDocuments({})).toBe(0);
  });

  it('rebuilds its indexes from the documents after a restart', async () => {
    const queries = fc.sample(queryArb, { numRuns: 40, seed: 9 });
    const before = await Promise.all(queries.map(answers));
    await client.close();
    await server.process.stop(10_000);
    await open();
    for (const [i, q] of queries.entries()) {
      const after = await answers(q);
      expect(after.indexed).toEqual(after.scanned);
      expect(after.indexed).toEqual(before[i]!.indexed);
    }
    const dup = await indexed
      .insertOne({ _id: 'code_c', owner_id: 'u9', created_at: DAYS[0]!, code: 'A' })
      .catch((e: unknown) => e);
    expect((dup as MongoServerError).code).toBe(11000);
  }, 60_000);
});
