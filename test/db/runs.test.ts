/** The runs projection against the real MongoDB wire server: writes are per step and never revive a finished run. */
import {
  newRunDoc,
  findRun,
  markStepCompleted,
  markStepRunning,
  recordPureSteps,
  recordRunCompletedWithLine,
  recordRunOutcome,
  runsCollection,
  setStepProgress,
} from '../../db/runs';
import { actionStep, agentStep, insertTestRun, testSnapshot } from '../helpers/snapshots';
import { useTestDb } from '../helpers/stack';
import { runEventsCollection } from '../../db/run-events';

describe('runs projection', () => {
  const database = useTestDb();

  const insert = async (runId: string) => {
    await runsCollection(database.db).insertOne(
      newRunDoc({
        snapshot: testSnapshot(runId, [actionStep('a'), agentStep('b')]),
        namespace: 'default',
        taskQueue: 'q',
      }),
    );
  };

  it('records each step and usage, and keeps outputs with keys MongoDB refuses as field names', async () => {
    await insert('run_projection01');
    expect(await markStepRunning(database.db, 'run_projection01', 'a', 2)).toBe(true);
    await markStepCompleted(database.db, 'run_projection01', 'a', { $weird: 1, 'dotted.key': 2 });
    await setStepProgress(database.db, 'run_projection01', 'b', {
      turn: 2,
      usage: { llm_calls: 2, input_tokens: 10, output_tokens: 5 },
    });
    const run = await findRun(database.db, 'usr_owner', 'run_projection01');
    expect(run?.status).toBe('running');
    expect(run?.steps[0]).toMatchObject({ status: 'completed', attempts: 2 });
    expect(JSON.parse(run?.steps[0]?.output_json ?? 'null')).toEqual({ $weird: 1, 'dotted.key': 2 });
    expect(run?.steps[1]).toMatchObject({ turns: 2, usage: { llm_calls: 2, input_tokens: 10, output_tokens: 5 } });
    expect(await findRun(database.db, 'usr_other', 'run_projection01')).toBeNull();
  });

  it('never turns a terminal run back into a running one', async () => {
    await insert('run_projection02');
    expect(
      await recordRunOutcome(database.db, 'run_projection02', {
        status: 'cancelled',
        error: { step_id: 'a', reason: 'cancelled', message: 'cancelled' },
        stepUpdates: [
          { id: 'a', status: 'failed', error: { reason: 'cancelled', message: 'cancelled' } },
          { id: 'b', status: 'skipped' },
        ],
      }),
    ).toBe(true);
    expect(await markStepRunning(database.db, 'run_projection02', 'a', 2)).toBe(false);
    expect(await markStepCompleted(database.db, 'run_projection02', 'a', 1)).toBe(false);
    expect(await recordRunOutcome(database.db, 'run_projection02', { status: 'completed', error: null })).toBe(false);
    const run = await findRun(database.db, 'usr_owner', 'run_projection02');
    expect(run?.status).toBe('cancelled');
    expect(run?.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
  });
  /** A run of three action steps a, b, c, none started. */
  const insertLine = (runId: string) =>
    insertTestRun(database.db, runId, [actionStep('a'), actionStep('b'), actionStep('c')]);

  it('records a line of pure steps in one write: each step completed with its input, the events in line order', async () => {
    const runId = await insertLine('run_projection_line');
    const t0 = new Date(Date.now() - 1_000);
    const t1 = new Date(Date.now() - 500);
    expect(
      await recordPureSteps(database.db, runId, [
        { stepId: 'b', attempt: 1, startedAt: t0, input: { expression: 'n' }, output: { $weird: 1 } },
        { stepId: 'a', attempt: 2, startedAt: t1, output: 7 },
      ]),
    ).toBe(true);
    const run = await findRun(database.db, 'usr_owner', runId);
    expect(run?.status).toBe('running');
    expect(run?.started_at).toEqual(t0);
    expect(run?.steps.map((s) => [s.id, s.status, s.attempts])).toEqual([
      ['a', 'completed', 2],
      ['b', 'completed', 1],
      ['c', 'pending', 0],
    ]);
    expect(JSON.parse(run?.steps[1]?.output_json ?? 'null')).toEqual({ $weird: 1 });
    expect(run?.steps[1]?.started_at).toEqual(t0);
    expect(run?.steps[1]?.input_json ?? null).not.toBeNull();
    // A later attempt keeps the first attempt's start (none recorded here) and shows no input.
    expect(run?.steps[0]?.started_at ?? null).toBeNull();
    expect(run?.steps[0]?.input_json ?? null).toBeNull();
    const events = await runEventsCollection(database.db).find({ run_id: runId }).sort({ seq: 1 }).toArray();
    expect(events.map((e) => `${e.seq} ${e.type} ${(JSON.parse(e.data_json) as { step_id: string }).step_id}`)).toEqual(
      ['1 step.started b', '2 step.completed b', '3 step.started a', '4 step.completed a'],
    );

    // Once the run has ended, nothing is written.
    await recordRunOutcome(database.db, runId, { status: 'completed', error: null, stepUpdates: [] });
    expect(
      await recordPureSteps(database.db, runId, [
        { stepId: 'c', attempt: 1, startedAt: t1, output: 1 },
        { stepId: 'b', attempt: 1, startedAt: t1, output: 2 },
      ]),
    ).toBe(false);
    expect((await findRun(database.db, 'usr_owner', runId))?.steps[2]?.status).toBe('pending');
  });

  it('records a line that ends the run with the run: steps, skipped steps and the end in one write, run.ended last', async () => {
    const runId = await insertLine('run_projection_line_end');
    const t0 = new Date(Date.now() - 1_000);
    const outcome = {
      status: 'completed' as const,
      error: null,
      // As deriveOutcome lists them: every step, those of the line as completed.
      stepUpdates: [
        { id: 'a', status: 'completed' as const },
        { id: 'b', status: 'completed' as const },
        { id: 'c', status: 'skipped' as const, skip_reason: 'condition' },
      ],
    };
    // A step the outcome updates otherwise, or an outcome that is not a completion, cannot go in the same write.
    const one = (stepId: string) => [{ stepId, attempt: 1, startedAt: t0, output: 1 }];
    expect(await recordRunCompletedWithLine(database.db, runId, one('c'), outcome)).toBeNull();
    const failed = {
      status: 'failed' as const,
      error: { step_id: 'a', reason: 'non_retryable', message: 'x' },
      stepUpdates: [],
    };
    expect(await recordRunCompletedWithLine(database.db, runId, one('a'), failed)).toBeNull();

    const ended = await recordRunCompletedWithLine(
      database.db,
      runId,
      [
        { stepId: 'a', attempt: 1, startedAt: t0, input: { expression: 'n' }, output: { $weird: 1 } },
        { stepId: 'b', attempt: 1, startedAt: t0, output: 2 },
      ],
      outcome,
    );
    expect(ended?.status).toBe('completed');
    const run = await findRun(database.db, 'usr_owner', runId);
    expect(run?.status).toBe('completed');
    expect(run?.completed_at).not.toBeNull();
    expect(run?.started_at).toEqual(t0);
    expect(run?.steps.map((s) => [s.id, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'skipped'],
    ]);
    expect(JSON.parse(run?.steps[0]?.output_json ?? 'null')).toEqual({ $weird: 1 });
    const events = await runEventsCollection(database.db).find({ run_id: runId }).sort({ seq: 1 }).toArray();
    expect(events.map((e) => `${e.seq} ${e.type}`)).toEqual([
      '1 step.started',
      '2 step.completed',
      '3 step.started',
      '4 step.completed',
      '5 run.ended',
    ]);
    expect(JSON.parse(events[4]!.data_json)).toMatchObject({ status: 'completed' });

    // Once the run has ended, nothing is written.
    expect(await recordRunCompletedWithLine(database.db, runId, one('a'), outcome)).toBeNull();
    expect(await runEventsCollection(database.db).countDocuments({ run_id: runId })).toBe(5);
  });
});
