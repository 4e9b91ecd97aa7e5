/**
 * The run event log against the real MongoDB wire server: concurrent writers of one run get a gap-free sequence,
 * a repeated happening is logged once, and readers see a prefix and stop at the end.
 */
import { appendRunEvent, readRunEvents, runEventsCollection } from '../../db/run-events';
import { insertRun, markStepCompleted, markStepRunning, newRunDoc, recordRunOutcome } from '../../db/runs';
import { actionStep, testSnapshot } from '../helpers/snapshots';
import { openTestDb, testConfig, uniqueId } from '../helpers/stack';
import type { Database } from '../../db/client';

describe('run event log', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDb(testConfig());
  });
  afterAll(async () => {
    await database.db.dropDatabase();
    await database.close();
  });

  const newRun = async () => {
    const runId = uniqueId('run_');
    await insertRun(
      database.db,
      newRunDoc({ snapshot: testSnapshot(runId, [actionStep('a')]), namespace: 'default', taskQueue: 'q' }),
    );
    return runId;
  };
  const readAll = (runId: string) =>
    readRunEvents(database.db, runId, { afterSeq: 0, counter: 10_000, probe: 0, limit: 10_000 });

  it('gives 40 concurrent writers the seqs 1..40, each once, and logs a repeated key once', async () => {
    const runId = await newRun();
    const keys = Array.from({ length: 40 }, (_, i) => `item[${i}]:step.started:1`);
    const seqs = await Promise.all(
      [...keys, ...keys.slice(0, 10)].map((key) =>
        appendRunEvent(database.db, runId, { type: 'step.started', key, data: { key } }),
      ),
    );
    const given = seqs.filter((s): s is number => s !== null).sort((a, b) => a - b);
    expect(given).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const events = await readAll(runId);
    expect(events.map((e) => e.seq)).toEqual(given);
    expect(new Set(events.map((e) => e.key)).size).toBe(40);
  });

  it('reads only the gap-free prefix after the last id, up to the counter and its probe', async () => {
    const runId = await newRun();
    for (let i = 1; i <= 5; i++)
      await appendRunEvent(database.db, runId, { type: 'step.started', key: `k${i}`, data: {} });
    // An event written straight at seq 7 (as a writer that lost a race could never do) is not part of the prefix.
    await runEventsCollection(database.db).insertOne({
      _id: `${runId}/000000007`,
      run_id: runId,
      seq: 7,
      key: `${runId}/stray`,
      type: 'step.started',
      at: new Date(),
      data_json: '{}',
    });
    const range = (afterSeq: number, counter: number, probe: number) =>
      readRunEvents(database.db, runId, { afterSeq, counter, probe, limit: 100 }).then((es) => es.map((e) => e.seq));
    expect(await range(0, 5, 1)).toEqual([1, 2, 3, 4, 5]);
    expect(await range(2, 5, 0)).toEqual([3, 4, 5]);
    // A counter update that was lost: the probe past it still finds the next event.
    expect(await range(3, 3, 1)).toEqual([4]);
    expect(await range(5, 5, 10)).toEqual([]);
  });

  it('logs a map item once per change; a late write to an item that ended logs nothing', async () => {
    const runId = await newRun();
    await markStepRunning(database.db, runId, 'a', 1, { itemsTotal: 2 });
    await markStepRunning(database.db, runId, 'a[0]', 1);
    await markStepCompleted(database.db, runId, 'a[0]', 'done');
    await markStepRunning(database.db, runId, 'a[0]', 2); // a zombie attempt, after the item completed
    await markStepCompleted(database.db, runId, 'a[0]', 'again');
    const events = await readAll(runId);
    expect(events.map((e) => `${e.type} ${(JSON.parse(e.data_json) as { exec_id: string }).exec_id}`)).toEqual([
      'step.started a',
      'step.started a[0]',
      'step.completed a[0]',
    ]);
  });

  it('logs step changes with the projection writes, and the end once, from the terminal document', async () => {
    const runId = await newRun();
    await markStepRunning(database.db, runId, 'a', 1);
    await markStepRunning(database.db, runId, 'a', 1); // a retried write
    await markStepCompleted(database.db, runId, 'a', { n: 1 });
    const outcome = { status: 'completed' as const, error: null };
    await recordRunOutcome(database.db, runId, outcome);
    await recordRunOutcome(database.db, runId, outcome); // the workflow's retry, or read-repair racing it
    // A straggler after the end: the run document refuses it, so nothing is logged.
    await markStepRunning(database.db, runId, 'a', 2);
    const events = await readAll(runId);
    expect(events.map((e) => [e.seq, e.type, e.key.slice(runId.length + 1)])).toEqual([
      [1, 'step.started', 'a:step.started:1'],
      [2, 'step.completed', 'a:step.completed'],
      [3, 'run.ended', 'run.ended'],
    ]);
    expect(JSON.parse(events[2]!.data_json)).toEqual({
      status: 'completed',
      error: null,
      usage: { llm_calls: 0, input_tokens: 0, output_tokens: 0 },
      steps: [{ id: 'a', status: 'completed' }],
    });
  });
});
