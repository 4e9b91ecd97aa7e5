/**
 * The run event log against the real MongoDB wire server: concurrent writers of one run get a gap-free sequence,
 * a repeated happening is logged once, readers see a prefix and stop at the end, and readers step over a hole a writer
 * left without writing anything, while a writer late for its seq takes a new one.
 */
import { followRunEvents } from '../../api/commands/run-events/follow';
import {
  allocateEventSeqs,
  appendRunEvent,
  appendRunEvents,
  fillEventSeq,
  isLoggedEvent,
  WRITE_WINDOW_MS,
  readEventCounter,
  runEventsCollection,
  type LoggedRunEvent,
} from '../../db/run-events';
import { markStepCompleted, markStepRunning } from '../../db/step-states';
import { recordRunOutcome } from '../../db/run-end';
import { runsCollection } from '../../db/runs';
import { readRunEvents } from '../helpers/run-events';
import { actionStep, insertTestRun } from '../helpers/snapshots';
import { uniqueId, useTestDb } from '../helpers/stack';

describe('run event log', () => {
  const database = useTestDb();

  const newRun = () => insertTestRun(database.db, uniqueId('run_'), [actionStep('a')]);
  /** Every document up to the counter, skips included. */
  const readAll = async (runId: string) => {
    const counter = (await readEventCounter(database.db, runId))!.counter;
    return readRunEvents(database.db, runId, { afterSeq: 0, counter, limit: 10_000 });
  };
  const readLogged = async (runId: string) => (await readAll(runId)).filter(isLoggedEvent);

  it('gives 50 concurrent writers the seqs 1..50, each once, and logs a repeated key once (a skip in its seq)', async () => {
    const runId = await newRun();
    const keys = Array.from({ length: 40 }, (_, i) => `item[${i}]:step.started:1`);
    const seqs = await Promise.all(
      [...keys, ...keys.slice(0, 10)].map((key) =>
        appendRunEvent(database.db, runId, { type: 'step.started', key, data: { key } }),
      ),
    );
    const given = seqs.filter((s): s is number => s !== null).sort((a, b) => a - b);
    expect(given).toHaveLength(40);
    const all = await readAll(runId);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const events = all.filter(isLoggedEvent);
    expect(events.map((e) => e.seq)).toEqual(given);
    expect(new Set(events.map((e) => e.key)).size).toBe(40);
  });

  it('reads only the gap-free prefix after the last id, up to the counter', async () => {
    const runId = await newRun();
    for (let i = 1; i <= 5; i++)
      await appendRunEvent(database.db, runId, { type: 'step.started', key: `k${i}`, data: {} });
    // Seq 6 allocated but never written (a writer that stopped), and an event at 7 behind the hole.
    expect((await allocateEventSeqs(database.db, runId, 1)).first).toBe(6);
    expect(await appendRunEvent(database.db, runId, { type: 'step.started', key: 'k7', data: {} })).toBe(7);
    const range = (afterSeq: number, counter: number) =>
      readRunEvents(database.db, runId, { afterSeq, counter, limit: 100 }).then((es) => es.map((e) => e.seq));
    expect(await range(0, 7)).toEqual([1, 2, 3, 4, 5]);
    expect(await range(2, 4)).toEqual([3, 4]);
    expect(await range(5, 7)).toEqual([]);
  });

  it('a reader steps over a hole it has waited at, writing nothing, and delivers what lies behind it; a late writer takes a new seq', async () => {
    const runId = await newRun();
    await appendRunEvent(database.db, runId, { type: 'step.started', key: 'a:step.started:1', data: {} });
    const hole = await allocateEventSeqs(database.db, runId, 1); // its writer "crashed" here
    await appendRunEvent(database.db, runId, { type: 'step.completed', key: 'b:step.completed', data: {} });
    const delivered: LoggedRunEvent[] = [];
    const controller = new AbortController();
    const following = followRunEvents(
      database.db,
      runId,
      {
        event: async (doc) => {
          delivered.push(doc);
          if (delivered.length === 2) controller.abort();
        },
        comment: async () => undefined,
      },
      {
        afterSeq: 0,
        pollMs: 20,
        heartbeatMs: 60_000,
        deadline: Date.now() + 60_000,
        signal: controller.signal,
        holeMs: 200,
      },
    );
    expect(await following).toBe('closed');
    expect(delivered.map((e) => [e.seq, e.type])).toEqual([
      [1, 'step.started'],
      [3, 'step.completed'],
    ]);
    // The reader wrote nothing at the hole.
    const holeId = `${runId}/${String(hole.first).padStart(9, '0')}`;
    const runsEvents = runEventsCollection(database.db);
    expect(await runsEvents.findOne({ _id: holeId })).toBeNull();
    // The writer of the hole comes back past its window: readers may have stepped over its seq, so it puts a skip
    // there and logs its event after everything else.
    const [late] = await appendRunEvents(
      database.db,
      runId,
      [{ type: 'step.completed', key: 'late:step.completed', data: {} }],
      { first: hole.first, at: Date.now() - WRITE_WINDOW_MS },
    );
    expect(late).toBe(4);
    expect(await runsEvents.findOne({ _id: holeId })).toMatchObject({ type: 'skip' });
  });

  it('appends a batch in one go; an event of it logged before gets a skip, one whose seq was filled goes last', async () => {
    const runId = await newRun();
    const fresh = await appendRunEvents(database.db, runId, [
      { type: 'step.started', key: 'a:step.started:1', data: {} },
      { type: 'step.completed', key: 'a:step.completed', data: {} },
    ]);
    expect(fresh).toEqual([1, 2]);
    // The same two again (a retried write), beside a new one whose seq was filled meanwhile.
    const first = await allocateEventSeqs(database.db, runId, 3);
    await fillEventSeq(database.db, runId, first.first + 2);
    const again = await appendRunEvents(
      database.db,
      runId,
      [
        { type: 'step.started', key: 'a:step.started:1', data: {} },
        { type: 'step.completed', key: 'a:step.completed', data: {} },
        { type: 'step.started', key: 'b:step.started:1', data: {} },
      ],
      first,
    );
    expect(again).toEqual([null, null, first.first + 3]);
    const all = await readAll(runId);
    expect(all.map((e) => [e.seq, e.type])).toEqual([
      [1, 'step.started'],
      [2, 'step.completed'],
      [3, 'skip'],
      [4, 'skip'],
      [5, 'skip'],
      [6, 'step.started'],
    ]);
  });

  it('logs a map item once per change; a late write to an item that ended logs nothing', async () => {
    const runId = await newRun();
    await markStepRunning(database.db, runId, 'a', 1, { itemsTotal: 2 });
    await markStepRunning(database.db, runId, 'a[0]', 1);
    await markStepCompleted(database.db, runId, 'a[0]', 'done');
    await markStepRunning(database.db, runId, 'a[0]', 2); // a zombie attempt, after the item completed
    await markStepCompleted(database.db, runId, 'a[0]', 'again');
    const events = await readLogged(runId);
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
    await recordRunOutcome(database.db, runId, outcome); // the workflow's retry, or the reconciler racing it
    // A straggler after the end: the run document refuses it, so nothing is logged.
    await markStepRunning(database.db, runId, 'a', 2);
    const events = await readLogged(runId);
    // Seq 2 went to the retried write (its event was logged before: a skip holds the seq).
    expect(events.map((e) => [e.seq, e.type, e.key.slice(runId.length + 1)])).toEqual([
      [1, 'step.started', 'a:step.started:1'],
      [3, 'step.completed', 'a:step.completed'],
      [4, 'run.ended', 'run.ended'],
    ]);
    expect(JSON.parse(events[2]!.data_json)).toEqual({
      status: 'completed',
      error: null,
      usage: { llm_calls: 0, input_tokens: 0, output_tokens: 0 },
      steps: [{ id: 'a', status: 'completed' }],
    });
  });
  it('delivers the end a writer never logged from the run document, writing nothing; a resumed client gets it once', async () => {
    const runId = await newRun();
    await markStepRunning(database.db, runId, 'a', 1);
    await markStepCompleted(database.db, runId, 'a', { n: 1 });
    await recordRunOutcome(database.db, runId, { status: 'completed', error: null });
    // The writer stopped between its terminal write and the end's insert: the end's seq is a hole.
    await runEventsCollection(database.db).deleteOne({ key: `${runId}/run.ended` });
    const stored = await runEventsCollection(database.db).countDocuments({ run_id: runId });
    const follow = async (afterSeq: number) => {
      const delivered: LoggedRunEvent[] = [];
      const end = await followRunEvents(
        database.db,
        runId,
        { event: async (doc) => void delivered.push(doc), comment: async () => undefined },
        {
          afterSeq,
          pollMs: 20,
          heartbeatMs: 60_000,
          deadline: Date.now() + 60_000,
          signal: new AbortController().signal,
          holeMs: 200,
        },
      );
      return { end, delivered };
    };
    const first = await follow(0);
    const counter = (await runsCollection(database.db).findOne({ _id: runId }))!.event_seq!;
    expect(first.end).toBe('ended');
    expect(first.delivered.map((e) => [e.seq, e.type])).toEqual([
      [1, 'step.started'],
      [2, 'step.completed'],
      [counter + 1, 'run.ended'],
    ]);
    expect(JSON.parse(first.delivered[2]!.data_json)).toMatchObject({ status: 'completed' });
    expect(await runEventsCollection(database.db).countDocuments({ run_id: runId })).toBe(stored);
    // Resumed after the end it was given: nothing more. Resumed just before it: the end again.
    expect((await follow(counter + 1)).delivered).toEqual([]);
    expect((await follow(counter)).delivered.map((e) => e.type)).toEqual(['run.ended']);
  });
});
