/**
 * Group commit of a map's quick items (db/execution-commits.ts) against the real MongoDB wire server: items that end
 * together are stored in fewer run writes than items, every execution and event lands once at gap-free seqs, a late
 * write to an ended execution leaves skips, and nothing is written to a run that has ended.
 */
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import { isLoggedEvent, readEventCounter } from '../../db/run-events';
import { recordStepDone } from '../../db/step-states';
import { recordRunOutcome } from '../../db/run-end';
import { readExecutions } from '../../db/step-executions';
import { readRunEvents } from '../helpers/run-events';
import { actionStep, insertTestRun } from '../helpers/snapshots';
import { testConfig, uniqueId, useTestDb } from '../helpers/stack';

describe('execution group commit', () => {
  const database = useTestDb();
  /** A second client on the same database that counts the commands it sends (the writes under test go through it). */
  let monitored: MongoClient;
  const commands: CommandStartedEvent[] = [];
  beforeAll(async () => {
    monitored = new MongoClient(testConfig().MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => commands.push(e));
    await monitored.connect();
  });
  afterAll(() => monitored?.close());
  /** One handle, as a worker has: the commits are grouped per handle. */
  let handle: Db | undefined;
  const db = () => (handle ??= monitored.db(database.db.databaseName));

  const newRun = () => insertTestRun(database.db, uniqueId('run_'), [actionStep('calls')]);
  const done = (output: number) => ({ attempt: 1, startedAt: new Date(), output });
  const logged = async (runId: string) => {
    const counter = (await readEventCounter(database.db, runId))!.counter;
    return { counter, docs: await readRunEvents(database.db, runId, { afterSeq: 0, counter, limit: 1_000 }) };
  };

  it('stores 30 items that end at once with fewer run writes than items; each event once, gap-free', async () => {
    const runId = await newRun();
    commands.length = 0;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => recordStepDone(db(), runId, `calls[${i}]`, done(i))),
    );
    expect(results).toEqual(Array.from({ length: 30 }, () => true));

    const runWrites = commands.filter((c) => c.commandName === 'findAndModify').length;
    expect(runWrites).toBeGreaterThanOrEqual(1);
    expect(runWrites).toBeLessThan(30);

    const { shown, counts } = (await readExecutions(database.db, runId, ['calls'], 100)).get('calls')!;
    expect(counts).toEqual({ total: 30, by_status: { completed: 30 } });
    expect(shown.map((e) => JSON.parse(e.output_json!) as number)).toEqual(Array.from({ length: 30 }, (_, i) => i));

    // Two events an item (started, completed) at seqs 1..60, none missing, none twice.
    const { counter, docs } = await logged(runId);
    expect(counter).toBe(60);
    expect(docs.map((d) => d.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const keys = docs.filter(isLoggedEvent).map((d) => d.key);
    expect(new Set(keys).size).toBe(60);
    for (let i = 0; i < 30; i++) {
      expect(keys).toContain(`${runId}/calls[${i}]:step.started:1`);
      expect(keys).toContain(`${runId}/calls[${i}]:step.completed`);
    }
    const run = await database.db.collection('runs').findOne({ _id: runId as never });
    expect(run?.status).toBe('running');
  });

  it('a repeated write to an ended execution changes nothing and fills its seqs with skips', async () => {
    const runId = await newRun();
    await recordStepDone(db(), runId, 'calls[0]', done(1));
    // A retried activity's write arrives again, queued with a new item's behind a third item's commit (the first
    // write of a run goes at once; what arrives meanwhile goes together): the repeat is left alone in that batch.
    const results = await Promise.all([
      recordStepDone(db(), runId, 'calls[2]', done(4)),
      recordStepDone(db(), runId, 'calls[0]', done(2)),
      recordStepDone(db(), runId, 'calls[1]', done(3)),
    ]);
    expect(results).toEqual([true, true, true]);
    const { shown } = (await readExecutions(database.db, runId, ['calls'], 10)).get('calls')!;
    expect(shown.map((e) => JSON.parse(e.output_json!) as number)).toEqual([1, 3, 4]);
    const { counter, docs } = await logged(runId);
    expect(counter).toBe(8);
    expect(docs.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const keys = docs.filter(isLoggedEvent).map((d) => d.key.slice(runId.length + 1));
    expect(keys.sort()).toEqual(
      ['calls[0]', 'calls[1]', 'calls[2]'].flatMap((e) => [`${e}:step.completed`, `${e}:step.started:1`]).sort(),
    );
  });

  it('writes nothing to a run that has ended, for every write of the batch', async () => {
    const runId = await newRun();
    await recordRunOutcome(database.db, runId, { status: 'cancelled', error: null });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => recordStepDone(db(), runId, `calls[${i}]`, done(i))),
    );
    expect(results).toEqual([false, false, false, false, false]);
    expect(await readExecutions(database.db, runId, ['calls'], 10)).toEqual(
      new Map([['calls', { shown: [], counts: { total: 0, by_status: {} } }]]),
    );
  });
});
