/**
 * USER_MAX_CONCURRENT_RUNS, shared by the API's start and the worker's scheduled start so the two cannot disagree.
 * Called after the run's record is inserted, so the count includes it. A run holds a slot when the count, its own
 * record included, is within the limit: of concurrent starts the last to count sees every other record, so the limit
 * is never overshot (no transaction needed). So that a burst does not refuse every start, a run among the first
 * `limit` of the owner's runs in flight (by creation) re-counts briefly while the later ones give up their records;
 * the later ones are refused at once. Counting only the runs created earlier is not enough on its own: a record
 * created earlier may be inserted later, and then neither run sees the other.
 */
import type { Db } from 'mongodb';
import { countActiveRuns, type RunDoc } from '../../db/runs';

/** Re-counts of a run that is within the limit by creation order while later concurrent starts back off. */
const RECOUNTS = 5;
const RECOUNT_MS = 100;

export async function holdsConcurrentSlot(
  db: Db,
  run: Pick<RunDoc, '_id' | 'owner_id' | 'created_at'>,
  limit: number,
): Promise<boolean> {
  for (let recount = 0; ; recount++) {
    if ((await countActiveRuns(db, run.owner_id, limit + 1)) <= limit) return true;
    const ahead = await countActiveRuns(db, run.owner_id, limit, run);
    if (ahead >= limit || recount >= RECOUNTS) return false;
    await new Promise((resolve) => setTimeout(resolve, RECOUNT_MS));
  }
}
