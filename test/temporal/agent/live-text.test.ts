/**
 * An attempt's live text (temporal/activities/agent/live-text.ts) against the real MongoDB wire server: the first text
 * is written as it arrives, not a flush interval later; what follows it waits for its batch, and what is left when
 * the call ends comes back for the call's own write.
 */
import { runEventsCollection } from '../../../db/run-events';
import { openLiveText } from '../../../temporal/activities/agent/live-text';
import { actionStep, insertTestRun } from '../../helpers/snapshots';
import { silentLogger, uniqueId, useTestDb } from '../../helpers/stack';

describe('live text of a model call', () => {
  const database = useTestDb();

  it('writes the first text at once; the text after it waits for its batch or the call’s end', async () => {
    const runId = uniqueId('run_');
    await insertTestRun(database.db, runId, [actionStep('ask')]);
    const live = openLiveText(
      { db: database.db, log: silentLogger, retentionMs: 3_600_000 },
      { runId, execId: 'ask', turn: 1, attempt: 1 },
    );
    live.push('Hello');
    // Past the microtasks that start the write, far within the flush interval: the next text is not due yet.
    await new Promise((resolve) => setImmediate(resolve));
    live.push(', world');
    const tail = await live.finish();

    const logged = await runEventsCollection(database.db).find({ run_id: runId }).sort({ seq: 1 }).toArray();
    expect(logged.map((d) => [d.type, JSON.parse(d.data_json).text])).toEqual([['agent.text.delta', 'Hello']]);
    expect(tail.map((e) => [e.type, e.data.text])).toEqual([['agent.text.delta', ', world']]);
    expect(tail[0]!.key).toBe('ask:text:1:1:1');
  });
});
