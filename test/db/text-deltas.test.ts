/**
 * Live text in the run event log against the real MongoDB wire server: only live text carries an expiry (and the TTL
 * index is there for MongoDB to apply it), a retried write logs once, a retried attempt knows an earlier one wrote
 * text, and a reader steps over a long stretch of expired text at once instead of waiting at each hole.
 */
import { followRunEvents } from '../../api/commands/run-events/follow';
import { appendRunEvent, runEventsCollection } from '../../db/run-events';
import {
  appendLiveText,
  earlierAttemptStreamed,
  textDeltaEvent,
  textVoidEvent,
  type TextStreamKey,
} from '../../db/text-deltas';
import { readRunEvents } from '../helpers/run-events';
import { actionStep, insertTestRun } from '../helpers/snapshots';
import { uniqueId, useTestDb } from '../helpers/stack';

describe('live text in the run event log', () => {
  const database = useTestDb();
  const later = () => new Date(Date.now() + 3_600_000);

  const newRun = async () => {
    const runId = uniqueId('run_');
    await insertTestRun(database.db, runId, [actionStep('a')]);
    return runId;
  };

  it('gives only live text an expiry, under a TTL index; a retried write logs once', async () => {
    const runId = await newRun();
    const key: TextStreamKey = { runId, execId: 'ask[2]', turn: 3, attempt: 1 };
    await appendRunEvent(database.db, runId, { type: 'step.started', key: 'ask[2]:step.started:1', data: {} });
    expect(await appendLiveText(database.db, key, textDeltaEvent(key, 0, 'Hel', later()))).toBe(true);
    expect(await appendLiveText(database.db, key, textDeltaEvent(key, 0, 'Hel', later()))).toBe(false);
    expect(await appendLiveText(database.db, key, textDeltaEvent(key, 1, 'lo', later()))).toBe(true);
    const docs = await readRunEvents(database.db, runId, { afterSeq: 0, counter: 10, limit: 10 });
    expect(docs.map((d) => [d.type, d.expires_at instanceof Date])).toEqual([
      ['step.started', false],
      ['agent.text.delta', true],
      ['skip', false],
      ['agent.text.delta', true],
    ]);
    expect(JSON.parse(docs[1]!.data_json)).toEqual({
      exec_id: 'ask[2]',
      step_id: 'ask',
      turn: 3,
      attempt: 1,
      text: 'Hel',
    });
    const indexes = await runEventsCollection(database.db).listIndexes().toArray();
    expect(indexes.find((i) => i.name === 'expires_ttl')).toMatchObject({
      key: { expires_at: 1 },
      expireAfterSeconds: 0,
    });
  });

  it('tells a retried attempt whether an earlier attempt of the same call wrote text', async () => {
    const runId = await newRun();
    const attempt = (execId: string, turn: number, n: number): TextStreamKey => ({ runId, execId, turn, attempt: n });
    expect(await earlierAttemptStreamed(database.db, attempt('ask', 1, 1))).toBe(false);
    expect(await earlierAttemptStreamed(database.db, attempt('ask', 1, 3))).toBe(false);
    await appendLiveText(database.db, attempt('ask', 1, 1), textDeltaEvent(attempt('ask', 1, 1), 0, 'x', later()));
    expect(await earlierAttemptStreamed(database.db, attempt('ask', 1, 3))).toBe(true);
    expect(await earlierAttemptStreamed(database.db, attempt('ask', 2, 2))).toBe(false);
    expect(await earlierAttemptStreamed(database.db, attempt('other', 1, 2))).toBe(false);
    const key = attempt('ask', 1, 3);
    expect(await appendLiveText(database.db, key, textVoidEvent(key, later()))).toBe(true);
    expect(await appendLiveText(database.db, key, textVoidEvent(key, later()))).toBe(false);
  });

  it('steps over a stretch of expired live text wider than a read at once, without waiting at each hole', async () => {
    const runId = await newRun();
    const key: TextStreamKey = { runId, execId: 'a', turn: 1, attempt: 1 };
    await appendRunEvent(database.db, runId, { type: 'step.started', key: 'a:step.started:1', data: {} });
    for (let n = 0; n < 250; n++) await appendLiveText(database.db, key, textDeltaEvent(key, n, `t${n}`, later()));
    await appendRunEvent(database.db, runId, { type: 'step.completed', key: 'a:step.completed', data: {} });
    // What the TTL monitor does once they expire; the events around them were written long before.
    await runEventsCollection(database.db).deleteMany({ run_id: runId, type: 'agent.text.delta' });
    await runEventsCollection(database.db).updateMany(
      { run_id: runId },
      { $set: { at: new Date(Date.now() - 7_200_000) } },
    );

    const delivered: string[] = [];
    const controller = new AbortController();
    const following = followRunEvents(
      database.db,
      runId,
      {
        event: async (doc) => {
          delivered.push(doc.type);
          if (doc.type === 'step.completed') controller.abort();
        },
        comment: async () => undefined,
      },
      {
        afterSeq: 0,
        pollMs: 20,
        heartbeatMs: 60_000,
        deadline: Date.now() + 3_600_000,
        signal: controller.signal,
        // A reader that waited at a hole would wait an hour: the test's timeout would end it first.
        holeMs: 3_600_000,
      },
    );
    expect(await following).toBe('closed');
    expect(delivered).toEqual(['step.started', 'step.completed']);
    const docs = await runEventsCollection(database.db).find({ run_id: runId }).sort({ _id: 1 }).toArray();
    // Stepped over, not filled: a reader writes nothing.
    expect(docs.map((d) => d.type)).toEqual(['step.started', 'step.completed']);
  }, 30_000);
});
