/** The runs projection against the real MongoDB wire server: writes are per step and never revive a finished run. */
import { newRunDoc, findRun, runsCollection } from '../../db/runs';
import { markStepCompleted, markStepRunning, setStepProgress } from '../../db/step-states';
import { recordRunOutcome } from '../../db/run-end';
import { actionStep, agentStep, testSnapshot } from '../helpers/snapshots';
import { useTestDb } from '../helpers/stack';

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
});
