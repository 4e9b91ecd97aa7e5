/**
 * The events of an agent step's waits against the real MongoDB wire server (db/step-states.ts, db/step-events.ts):
 * each tool call it waits for logs its own `step.waiting` and `step.resumed`, a retried write of the same wait or
 * resumption logs nothing new, and an approval step's single wait keeps the key it always had.
 */
import { approvalsCollection } from '../../db/approvals';
import { runsCollection } from '../../db/runs';
import { findExecution } from '../../db/step-executions';
import { parseExecutionId } from '../../domain/exec-id';
import { isLoggedEvent, readEventCounter } from '../../db/run-events';
import { markAgentResumed, markAgentWaiting, markStepWaiting } from '../../db/step-waits';
import { readRunEvents } from '../helpers/run-events';
import { actionStep, agentStep, insertTestRun } from '../helpers/snapshots';
import { uniqueId, useTestDb } from '../helpers/stack';

describe('agent waits in the event log', () => {
  const database = useTestDb();

  const logged = async (runId: string) => {
    const counter = (await readEventCounter(database.db, runId))!.counter;
    const all = await readRunEvents(database.db, runId, { afterSeq: 0, counter, limit: 1000 });
    // Stored keys are `<run id>/<key>`.
    return all
      .filter(isLoggedEvent)
      .map((e) => ({ type: e.type, key: e.key.slice(runId.length + 1), data: JSON.parse(e.data_json) as object }));
  };
  const statusOf = async (runId: string, exec: string) => {
    const inner = parseExecutionId(exec);
    if (inner?.kind === 'item') {
      return (await findExecution(database.db, runId, inner.stepId, inner.index))?.status;
    }
    const run = await runsCollection(database.db).findOne({ _id: runId });
    return run?.steps.find((s) => s.id === exec)?.status;
  };
  const inboxOf = (runId: string) => approvalsCollection(database.db).find({ run_id: runId }).toArray();
  const approval = (message: string) => ({
    message,
    instructions: null,
    waiting_since: new Date().toISOString(),
    deadline: null,
  });

  it('logs each waited call once, however often its write is retried', async () => {
    const runId = await insertTestRun(database.db, uniqueId('run_'), [agentStep('ask')]);
    const first = { transcript_seq: 1, index: 0, name: 'ops__wipe' };
    const second = { transcript_seq: 3, index: 0, name: 'ops__wipe' };
    for (const call of [first, second]) {
      // Each write twice: an activity retried after its write took effect.
      for (let i = 0; i < 2; i++) {
        expect(await markAgentWaiting(database.db, runId, 'ask', call, approval(`call ${call.transcript_seq}`))).toBe(
          true,
        );
      }
      for (let i = 0; i < 2; i++) expect(await markAgentResumed(database.db, runId, 'ask', call, true)).toBe(true);
    }
    const events = await logged(runId);
    expect(events.map((e) => [e.type, e.key])).toEqual([
      ['step.waiting', 'ask:step.waiting:1:0'],
      ['step.resumed', 'ask:step.resumed:1:0'],
      ['step.waiting', 'ask:step.waiting:3:0'],
      ['step.resumed', 'ask:step.resumed:3:0'],
    ]);
    expect(events[2]!.data).toEqual({ exec_id: 'ask', step_id: 'ask', tool_call: second });
    expect(events[3]!.data).toEqual({ exec_id: 'ask', step_id: 'ask', tool_call: second, approved: true });
  });

  it('does the same for a map item and a loop iteration running an agent', async () => {
    const runId = await insertTestRun(database.db, uniqueId('run_'), [agentStep('ask')]);
    const calls = [
      { transcript_seq: 1, index: 0, name: 'ops__wipe' },
      { transcript_seq: 1, index: 1, name: 'ops__wipe' },
    ];
    for (const exec of ['ask[3]', 'ask#2']) {
      for (const call of calls) {
        for (let i = 0; i < 2; i++) await markAgentWaiting(database.db, runId, exec, call, approval(exec));
        for (let i = 0; i < 2; i++) await markAgentResumed(database.db, runId, exec, call, false);
      }
    }
    const events = await logged(runId);
    expect(events.map((e) => e.key)).toEqual([
      'ask[3]:step.waiting:1:0',
      'ask[3]:step.resumed:1:0',
      'ask[3]:step.waiting:1:1',
      'ask[3]:step.resumed:1:1',
      'ask#2:step.waiting:1:0',
      'ask#2:step.resumed:1:0',
      'ask#2:step.waiting:1:1',
      'ask#2:step.resumed:1:1',
    ]);
    expect(events[3]!.data).toEqual({ exec_id: 'ask[3]', step_id: 'ask', tool_call: calls[1], approved: false });
  });

  // Two destructive calls of one turn: the second wait starts once the first is decided, while the first call's
  // activity writes its resumption. A resumption that lands after the next wait must leave that wait alone.
  it.each(['ask', 'ask[3]'])('a late resumption of %s leaves the next wait as it is', async (exec) => {
    const runId = await insertTestRun(database.db, uniqueId('run_'), [agentStep('ask')]);
    const [first, second] = [0, 1].map((index) => ({ transcript_seq: 1, index, name: 'ops__wipe' }));
    await markAgentWaiting(database.db, runId, exec, first!, approval('first'));
    await markAgentWaiting(database.db, runId, exec, second!, approval('second'));
    await markAgentResumed(database.db, runId, exec, first!, true);
    expect(await statusOf(runId, exec)).toBe('waiting');
    expect((await inboxOf(runId)).map((a) => a.message)).toEqual(['second']);

    await markAgentResumed(database.db, runId, exec, second!, true);
    expect(await statusOf(runId, exec)).toBe('running');
    expect(await inboxOf(runId)).toEqual([]);
    // The step went from one wait to the next: the late resumption logs nothing.
    expect((await logged(runId)).map((e) => e.key)).toEqual([
      `${exec}:step.waiting:1:0`,
      `${exec}:step.waiting:1:1`,
      `${exec}:step.resumed:1:1`,
    ]);
  });

  it("keeps an approval step's single wait under its key, with no tool call", async () => {
    const runId = await insertTestRun(database.db, uniqueId('run_'), [actionStep('review', 'approval')]);
    expect(await markStepWaiting(database.db, runId, 'review', approval('ok?'))).toBe(true);
    expect(await markStepWaiting(database.db, runId, 'review', approval('ok?'))).toBe(true);
    expect(await logged(runId)).toEqual([
      { type: 'step.waiting', key: 'review:step.waiting', data: { exec_id: 'review', step_id: 'review' } },
    ]);
  });
});
