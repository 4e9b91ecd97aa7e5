/**
 * Experiments (issue #47 item 2): one document per experiment, owner-scoped. What it runs (a pinned dataset version,
 * a workflow with optional overrides, scorer declarations as given) is fixed at creation; its status, progress and
 * spend are written by the experiment workflow's activities (temporal/activities/experiment.ts).
 */
import type { Db } from 'mongodb';
import type { RerunOverrides } from './runs';
import type { JsonValue } from '../domain/json';
import type {
  ExperimentBudget,
  ExperimentMode,
  ExperimentReplay,
  ExperimentSpend,
  ExperimentStatus,
} from '../domain/experiment';

export interface ExperimentDoc {
  _id: string;
  owner_id: string;
  name: string;
  dataset_id: string;
  dataset_version: number;
  workflow_id: string;
  overrides: RerunOverrides | null;
  mode: ExperimentMode;
  /** Mode `replay`: its options (null or absent otherwise). */
  replay?: ExperimentReplay | null;
  /** The scorer declarations as given (compiled again by the scoring activity; they compiled at creation). */
  scorers: JsonValue[];
  concurrency: number;
  repetitions: number;
  budget: ExperimentBudget;
  status: ExperimentStatus;
  /** Items × repetitions. */
  total: number;
  /** Results stored so far. */
  done: number;
  spend: ExperimentSpend;
  /** Why it failed, or what stopped it (the budget's numbers). */
  message: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export function experimentsCollection(db: Db) {
  return db.collection<ExperimentDoc>('experiments');
}

export async function insertExperiment(db: Db, doc: ExperimentDoc): Promise<void> {
  await experimentsCollection(db).insertOne(doc);
}

export async function findOwnExperiment(db: Db, ownerId: string, id: string): Promise<ExperimentDoc | null> {
  return experimentsCollection(db).findOne({ _id: id, owner_id: ownerId });
}

export async function findExperiment(db: Db, id: string): Promise<ExperimentDoc | null> {
  return experimentsCollection(db).findOne({ _id: id });
}

/** Marks it running (only from queued: a retried activity or a resumed workflow changes nothing). */
export async function markExperimentRunning(db: Db, id: string): Promise<void> {
  await experimentsCollection(db).updateOne(
    { _id: id, status: 'queued' },
    { $set: { status: 'running', updated_at: new Date() } },
  );
}

/** Progress and spend, recomputed from the stored results (idempotent: a retried write writes the same). */
export async function setExperimentProgress(db: Db, id: string, done: number, spend: ExperimentSpend): Promise<void> {
  await experimentsCollection(db).updateOne({ _id: id }, { $set: { done, spend, updated_at: new Date() } });
}

/** The end, once: a terminal status is never replaced. */
export async function endExperiment(db: Db, id: string, status: ExperimentStatus, message: string | null) {
  const now = new Date();
  await experimentsCollection(db).updateOne(
    { _id: id, status: { $in: ['queued', 'running'] } },
    { $set: { status, message, completed_at: now, updated_at: now } },
  );
}
