/**
 * The run search is one indexed query per page, for a user with 100 000 runs as for one with ten.
 *
 * - Always: every query shape db/run-search.ts builds is checked against INDEXES.runs — some index must hold the
 *   shape's equality fields first and then exactly the sort keys (the ESR rule), so the server walks the index in
 *   order and stops after one page, without a blocking sort. Removing or reordering an index fails this test.
 * - With a real mongod (the suite uses one when it is on PATH): `explain('executionStats')` over 20 000 runs shows
 *   the plan — an index scan of the expected index, no SORT stage, and a few dozen documents examined for a page. The
 *   embedded test server has no `explain`, so there the test is skipped and says why.
 */
import type { Document, IndexDescription } from 'mongodb';
import { INDEXES } from '../../db/indexes';
import { runSearchFilter, type RunSearch } from '../../db/run-search';
import { runsCollection } from '../../db/runs';
import { openTestDb, testConfig } from '../helpers/stack';
import type { Database } from '../../db/client';

const SORT: [string, 1 | -1][] = [
  ['created_at', -1],
  ['_id', -1],
];

const SHAPES: { name: string; search: Omit<RunSearch, 'ownerId'>; index: string }[] = [
  { name: 'all runs', search: {}, index: 'by_owner_created' },
  { name: 'terminal statuses', search: { statuses: ['failed', 'timed_out'] }, index: 'by_owner_status_created' },
  { name: 'derived statuses', search: { statuses: ['waiting', 'running'] }, index: 'by_owner_status_created' },
  { name: 'one workflow', search: { workflowId: 'wf_x' }, index: 'by_owner_workflow_created' },
  {
    name: 'a time window',
    search: { createdAfter: new Date(0), createdBefore: new Date() },
    index: 'by_owner_created',
  },
  { name: 'name text', search: { text: 'flow 3' }, index: 'by_owner_created' },
  {
    name: 'status and time',
    search: { statuses: ['completed'], createdAfter: new Date(0) },
    index: 'by_owner_status_created',
  },
];

/** Fields an index can match by equality (a value, or a set of values): the E of ESR. */
function equalityFields(filter: Document): Set<string> {
  const out = new Set<string>();
  for (const [field, value] of Object.entries(filter)) {
    if (field.startsWith('$') || value === null) continue;
    const isOperator = typeof value === 'object' && !(value instanceof Date);
    if (!isOperator || Object.keys(value as object).every((op) => op === '$in' || op === '$eq')) out.add(field);
  }
  return out;
}

/** The indexes that serve the shape without a sort: equality fields (a subset), then exactly the sort keys. */
function servingIndexes(filter: Document): IndexDescription[] {
  const eq = equalityFields(filter);
  return (INDEXES.runs ?? []).filter((index) => {
    const keys = Object.entries(index.key as Record<string, 1 | -1>);
    const prefix = keys.length - SORT.length;
    if (prefix < 1) return false;
    const head = keys.slice(0, prefix);
    const tail = keys.slice(prefix);
    const forward = tail.every(([k, d], i) => k === SORT[i]![0] && d === SORT[i]![1]);
    const backward = tail.every(([k, d], i) => k === SORT[i]![0] && d === -SORT[i]![1]);
    return head.every(([k]) => eq.has(k)) && (forward || backward);
  });
}

describe('run search plan', () => {
  describe.each(SHAPES)('$name', ({ search, index }) => {
    it(`is served in order by ${index}, most selective first`, () => {
      const filter = runSearchFilter({ ownerId: 'usr_x', ...search });
      const serving = servingIndexes(filter).map((i) => i.name);
      expect(serving).toContain(index);
      // The chosen index uses every equality field any serving index could (none leaves selectivity unused).
      const longest = Math.max(...servingIndexes(filter).map((i) => Object.keys(i.key).length));
      expect(Object.keys(INDEXES.runs!.find((i) => i.name === index)!.key)).toHaveLength(longest);
    });
  });

  const realMongod = process.env.STEPWISE_TEST_MONGODB_KIND === 'mongod';
  const explained = realMongod ? it : it.skip;

  describe('explain() on a real mongod', () => {
    let database: Database | undefined;
    afterAll(async () => {
      await database?.db.dropDatabase();
      await database?.close();
    });

    explained(
      realMongod
        ? 'scans the index in order and reads about one page of 20 000 runs'
        : 'skipped: the embedded test server (mongo-java-server) has no explain; it runs when mongod is on PATH',
      async () => {
        database = await openTestDb(testConfig());
        const runs = runsCollection(database.db);
        const docs = Array.from({ length: 20_000 }, (_, i) => ({
          _id: `run_plan${String(i).padStart(8, '0')}`,
          owner_id: i % 10 === 0 ? 'usr_other' : 'usr_plan',
          workflow_id: `wf_${i % 7}`,
          workflow_name: `Flow ${i % 7}`,
          status: ['completed', 'failed', 'running'][i % 3],
          steps: [{ id: 's', status: i % 3 === 2 ? 'running' : 'completed' }],
          parent_run_id: null,
          created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000),
        }));
        await runs.insertMany(docs as never);
        for (const shape of SHAPES) {
          const filter = runSearchFilter({ ownerId: 'usr_plan', ...shape.search });
          const plan = await runs.find(filter).sort({ created_at: -1, _id: -1 }).limit(51).explain('executionStats');
          const text = JSON.stringify(plan.queryPlanner.winningPlan);
          expect({ shape: shape.name, ixscan: text.includes('IXSCAN'), sort: /"stage":"SORT"/.test(text) }).toEqual({
            shape: shape.name,
            ixscan: true,
            sort: false,
          });
          expect(text).toContain(shape.index);
          // A page (51 with the look-ahead) plus what the residual filters skip: never the whole collection.
          expect(plan.executionStats.totalDocsExamined).toBeLessThan(2_000);
        }
      },
    );
  });
});
