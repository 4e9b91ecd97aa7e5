/**
 * The reconciler's reads of the `runs` projection (temporal/reconciler.ts): bounded pages in (updated_at, _id)
 * order over the index `by_status_updated`, resumed from where the last page stopped, so a pass costs one indexed
 * read of at most `limit` runs however many there are, and runs that stay quiet for long (an approval waiting for
 * days) cannot keep the others from their turn.
 */
import type { Db, Filter } from 'mongodb';
import { IN_FLIGHT_RUN_STATUSES } from '../domain/run';
import { runsCollection, type RunDoc } from './runs';

/** Where a page stopped: the next page starts after it. */
export interface ScanPosition {
  updated_at: Date;
  _id: string;
}

/** What the reconciler needs of a run: its steps and Temporal ref, and where its completion webhook goes. */
export type ReconcileCandidate = Pick<
  RunDoc,
  '_id' | 'owner_id' | 'status' | 'steps' | 'temporal' | 'created_at' | 'updated_at'
> & { snapshot: Pick<RunDoc['snapshot'], 'callback_url' | 'parent'> };

const CANDIDATE_PROJECTION = {
  owner_id: 1,
  status: 1,
  steps: 1,
  temporal: 1,
  created_at: 1,
  updated_at: 1,
  'snapshot.callback_url': 1,
  'snapshot.parent': 1,
} as const;

function after(from: ScanPosition | null): Filter<RunDoc> {
  if (!from) return {};
  return {
    $or: [{ updated_at: { $gt: from.updated_at } }, { updated_at: from.updated_at, _id: { $gt: from._id } }],
  };
}

/** Non-terminal runs whose projection has not changed since `quietSince`, after `from`. */
export async function findQuietOpenRuns(
  db: Db,
  quietSince: Date,
  from: ScanPosition | null,
  limit: number,
): Promise<ReconcileCandidate[]> {
  return runsCollection(db)
    .find<ReconcileCandidate>(
      { status: { $in: [...IN_FLIGHT_RUN_STATUSES] }, updated_at: { $lt: quietSince }, ...after(from) },
      { projection: CANDIDATE_PROJECTION },
    )
    .sort({ updated_at: 1, _id: 1 })
    .limit(limit)
    .toArray();
}

/** Completed runs that ended after `from` with a completed step whose output never reached the projection. */
export async function findLostOutputRuns(
  db: Db,
  from: ScanPosition,
  limit: number,
): Promise<{ found: ReconcileCandidate[]; next: ScanPosition }> {
  // The page is taken on the index alone (status + updated_at); the step test only filters it.
  const page = await runsCollection(db)
    .find<ReconcileCandidate>({ status: 'completed', ...after(from) }, { projection: CANDIDATE_PROJECTION })
    .sort({ updated_at: 1, _id: 1 })
    .limit(limit)
    .toArray();
  const last = page.at(-1);
  return {
    found: page.filter((r) => r.steps.some((s) => s.status === 'completed' && s.output_json === null)),
    next: last ? { updated_at: last.updated_at, _id: last._id } : from,
  };
}
