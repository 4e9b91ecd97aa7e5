/** Reading a run's event log directly, for tests that assert what was logged (the API reads it through its stream). */
import type { Db } from 'mongodb';
import { readRunEventWindow, type RunEventDoc } from '../../db/run-events';

/** The gap-free run of documents after `afterSeq`, skips included, as readRunEventWindow reads it. */
export async function readRunEvents(
  db: Db,
  runId: string,
  range: { afterSeq: number; counter: number; limit: number },
): Promise<RunEventDoc[]> {
  return (await readRunEventWindow(db, runId, range)).events;
}
