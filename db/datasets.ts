/**
 * The `datasets` collection: one document per dataset — its name (unique per owner), description, the workflow whose
 * input schema its items must satisfy, and its committed version with that version's item count. The items are
 * `dataset_items` (./dataset-items.ts); how a change becomes a version is ./dataset-changes.ts, the only writer of
 * `version`, `item_count` and `changing` (docs/decisions/0610-dataset-versions.md).
 */
import type { Db } from 'mongodb';

/** A change under way: the version it will commit, who holds it, since when (a crashed holder's is taken over). */
export interface DatasetChangeLock {
  version: number;
  token: string;
  at: Date;
}

export interface DatasetDoc {
  /** `ds_<16 base64url characters>`. */
  _id: string;
  owner_id: string;
  name: string;
  description: string | null;
  /** The workflow the dataset is for: its `config.input_schema` checks every item's input. */
  workflow_id: string | null;
  /** The last committed version (0: created, no change yet). Readers read at it; a change under way is above it. */
  version: number;
  /** Items at `version`. */
  item_count: number;
  changing: DatasetChangeLock | null;
  created_at: Date;
  updated_at: Date;
}

export function datasetsCollection(db: Db) {
  return db.collection<DatasetDoc>('datasets');
}

export async function insertDataset(db: Db, doc: DatasetDoc): Promise<void> {
  await datasetsCollection(db).insertOne(doc);
}

/** An owner's dataset, or null (unknown id or another user's). */
export async function findOwnDataset(db: Db, ownerId: string, datasetId: string): Promise<DatasetDoc | null> {
  return datasetsCollection(db).findOne({ _id: datasetId, owner_id: ownerId });
}

export async function countOwnDatasets(db: Db, ownerId: string): Promise<number> {
  return datasetsCollection(db).countDocuments({ owner_id: ownerId });
}

/** Renames or re-describes a dataset (not a new version: the items are what a version holds). */
export async function updateOwnDataset(
  db: Db,
  ownerId: string,
  datasetId: string,
  set: Partial<Pick<DatasetDoc, 'name' | 'description'>>,
): Promise<DatasetDoc | null> {
  return datasetsCollection(db).findOneAndUpdate(
    { _id: datasetId, owner_id: ownerId },
    { $set: { ...set, updated_at: new Date() } },
    { returnDocument: 'after' },
  );
}

/**
 * Deletes the dataset, then its items and versions. The dataset goes first: should the process stop in between,
 * what is left is unreachable (every read starts from an owned dataset) rather than a dataset missing its items.
 */
export async function deleteOwnDataset(db: Db, ownerId: string, datasetId: string): Promise<boolean> {
  const res = await datasetsCollection(db).deleteOne({ _id: datasetId, owner_id: ownerId });
  if (res.deletedCount !== 1) return false;
  await Promise.all([
    db.collection('dataset_items').deleteMany({ dataset_id: datasetId }),
    db.collection('dataset_versions').deleteMany({ dataset_id: datasetId }),
  ]);
  return true;
}
