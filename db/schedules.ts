/**
 * The `schedules` collection: who owns which schedule of which workflow, and what was asked for. The source of
 * ownership and of listings (every query filters by owner); Temporal's Schedule of the same id holds the timing,
 * the pause state and the recent actions.
 */
import type { Db } from 'mongodb';
import type { JsonObject } from '../domain/json';

export type OverlapPolicy = 'skip' | 'buffer_one' | 'allow_all' | 'cancel_other';

/** When a schedule fires, as the user wrote it (times as ISO strings). */
export interface ScheduleSpecDoc {
  cron?: string[];
  interval?: { every_seconds: number; offset_seconds?: number };
  time_zone?: string;
  start_at?: string;
  end_at?: string;
  jitter_seconds?: number;
}

export interface ScheduleDoc {
  /** `sch_<16 base64url characters>`; also the Temporal Schedule id. */
  _id: string;
  owner_id: string;
  workflow_id: string;
  spec: ScheduleSpecDoc;
  overlap: OverlapPolicy;
  catchup_window_seconds: number;
  input: JsonObject;
  created_at: Date;
  updated_at: Date;
}

export function schedulesCollection(db: Db) {
  return db.collection<ScheduleDoc>('schedules');
}

export async function insertSchedule(db: Db, doc: ScheduleDoc): Promise<void> {
  await schedulesCollection(db).insertOne(doc);
}

/** An owner's schedule, or null (unknown id or another user's). */
export async function findOwnSchedule(db: Db, ownerId: string, scheduleId: string) {
  return schedulesCollection(db).findOne({ _id: scheduleId, owner_id: ownerId });
}

export async function countOwnSchedules(db: Db, ownerId: string): Promise<number> {
  return schedulesCollection(db).countDocuments({ owner_id: ownerId });
}

export async function updateOwnSchedule(
  db: Db,
  ownerId: string,
  scheduleId: string,
  set: Partial<Pick<ScheduleDoc, 'spec' | 'overlap' | 'catchup_window_seconds' | 'input'>>,
): Promise<ScheduleDoc | null> {
  return schedulesCollection(db).findOneAndUpdate(
    { _id: scheduleId, owner_id: ownerId },
    { $set: { ...set, updated_at: new Date() } },
    { returnDocument: 'after' },
  );
}

export async function deleteOwnSchedule(db: Db, ownerId: string, scheduleId: string): Promise<boolean> {
  const res = await schedulesCollection(db).deleteOne({ _id: scheduleId, owner_id: ownerId });
  return res.deletedCount === 1;
}

/** The ids of a workflow's schedules (to delete them with the workflow). */
export async function workflowScheduleIds(db: Db, ownerId: string, workflowId: string): Promise<string[]> {
  const docs = await schedulesCollection(db)
    .find({ owner_id: ownerId, workflow_id: workflowId }, { projection: { _id: 1 } })
    .toArray();
  return docs.map((d) => d._id);
}
