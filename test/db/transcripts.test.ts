/** The transcripts repository against the real MongoDB server: idempotent overwrites, and no overwrite by a zombie. */
import {
  putTranscriptEntry,
  readTranscript,
  TranscriptSupersededError,
  type TranscriptEntry,
} from '../../db/transcripts';
import type { Database } from '../../db/client';
import { openTestDb, testConfig, uniqueId } from '../helpers/stack';

const user = (text: string): TranscriptEntry => ({ kind: 'user', text, repair: false });

describe('transcripts repository', () => {
  let database: Database;

  beforeAll(async () => {
    database = await openTestDb(testConfig());
  });
  afterAll(async () => {
    await database?.db.dropDatabase().catch(() => undefined);
    await database?.close();
  });

  it('keeps one entry per seq, in seq order, and a retry overwrites its own entry', async () => {
    const runId = uniqueId('run_');
    for (const seq of [10, 2, 1]) {
      await putTranscriptEntry(database.db, { runId, stepId: 'a', seq, attempt: 1 }, user(`seq ${seq}`));
    }
    await putTranscriptEntry(database.db, { runId, stepId: 'a', seq: 2, attempt: 2 }, user('retried'));
    await putTranscriptEntry(database.db, { runId, stepId: 'b', seq: 1, attempt: 1 }, user('other step'));
    const entries = await readTranscript(database.db, runId, 'a');
    expect(entries.map((e) => [e.seq, e.kind === 'user' && e.text, e.attempt])).toEqual([
      [1, 'seq 1', 1],
      [2, 'retried', 2],
      [10, 'seq 10', 1],
    ]);
    expect((await readTranscript(database.db, runId, 'a', 10)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('refuses an overwrite by an earlier attempt (a zombie Temporal already gave up on)', async () => {
    const runId = uniqueId('run_');
    const key = { runId, stepId: 'a', seq: 3 };
    await putTranscriptEntry(database.db, { ...key, attempt: 2 }, user('accepted'));
    await expect(putTranscriptEntry(database.db, { ...key, attempt: 1 }, user('late'))).rejects.toBeInstanceOf(
      TranscriptSupersededError,
    );
    const [entry] = await readTranscript(database.db, runId, 'a');
    expect(entry).toMatchObject({ text: 'accepted', attempt: 2 });
    await putTranscriptEntry(database.db, { ...key, attempt: 3 }, user('newer'));
    expect((await readTranscript(database.db, runId, 'a'))[0]).toMatchObject({ text: 'newer', attempt: 3 });
  });
});
