/**
 * A thread's removal (DELETE /api/v1/threads/:id, once its running turn has ended): its turns' runs and everything
 * keyed by them — transcripts, the event log (live text included), approvals, map executions, blobs, webhook
 * deliveries, the idempotency claims of its messages — then its messages and the thread. The per-call usage
 * documents (`usage_calls`) stay: they are the owner's accounting of the day, not the thread's content, and expire
 * by themselves. Collections without a `run_id` field are listed here on purpose, so a new run-keyed collection is
 * added in one place.
 */
import type { Db } from 'mongodb';
import { removeThreadDoc } from './threads';
import { removeThreadMessages, threadRunIds } from './thread-messages';
import { runsCollection } from './runs';
import { removeMemoryVersions } from './thread-memory';

/** Collections whose documents belong to one run through their `run_id`. */
export const RUN_KEYED_COLLECTIONS = [
  'transcripts',
  'run_events',
  'approvals',
  'step_executions',
  'blobs',
  'webhook_deliveries',
  'idempotency_keys',
] as const;

/** The thread's turn runs: those its messages name and those recorded under it (a start a message never saw). */
export async function threadRuns(db: Db, threadId: string): Promise<string[]> {
  const [named, recorded] = await Promise.all([
    threadRunIds(db, threadId),
    runsCollection(db)
      .find({ thread_id: threadId }, { projection: { _id: 1 } })
      .toArray(),
  ]);
  return [...new Set([...named, ...recorded.map((r) => r._id)])];
}

export async function removeThreadData(db: Db, threadId: string, runIds: readonly string[]): Promise<void> {
  if (runIds.length > 0) {
    const ids = [...runIds];
    // The runs first: a late write of a turn's worker (a retried end, a terminated workflow's last local activity)
    // reads or conditions on its run and so writes nothing once the run is gone, where it would otherwise log an
    // event between the two deletes.
    await runsCollection(db).deleteMany({ _id: { $in: ids } });
    await Promise.all(RUN_KEYED_COLLECTIONS.map((name) => db.collection(name).deleteMany({ run_id: { $in: ids } })));
  }
  await Promise.all([removeThreadMessages(db, threadId), removeMemoryVersions(db, threadId)]);
  await removeThreadDoc(db, threadId);
}
