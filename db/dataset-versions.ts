/**
 * The `dataset_versions` collection: one document per committed version of a dataset — when it was made, what the
 * change did, how many items it holds. A version's items are read from `dataset_items` (./dataset-items.ts); this is
 * the list an experiment picks a version from. Written only by ./dataset-changes.ts (and version 0 at creation).
 */
import type { Db } from 'mongodb';
import { findPage, type Page, type PageRequest } from './paging';

/** What made a version: the kind of change, for a reader of the history. */
export type DatasetChangeKind = 'created' | 'items_added' | 'item_updated' | 'items_removed' | 'imported' | 'from_runs';

export interface DatasetVersionDoc {
  /** `<dataset_id>@<version, 10 digits>`: the `_id` order is the version order. */
  _id: string;
  dataset_id: string;
  owner_id: string;
  version: number;
  change: DatasetChangeKind;
  added: number;
  updated: number;
  removed: number;
  item_count: number;
  created_at: Date;
}

export function datasetVersionsCollection(db: Db) {
  return db.collection<DatasetVersionDoc>('dataset_versions');
}

export const versionId = (datasetId: string, version: number) => `${datasetId}@${String(version).padStart(10, '0')}`;

export async function insertDatasetVersion(db: Db, doc: DatasetVersionDoc): Promise<void> {
  await datasetVersionsCollection(db).insertOne(doc);
}

/** A dataset's versions, newest first. */
export async function findVersionsPage(db: Db, datasetId: string, page: PageRequest): Promise<Page<DatasetVersionDoc>> {
  return findPage(datasetVersionsCollection(db), { dataset_id: datasetId }, page, { sortField: '_id', direction: -1 });
}

/** Removes the record of a version that was never committed. */
export async function discardDatasetVersion(db: Db, datasetId: string, version: number): Promise<void> {
  await datasetVersionsCollection(db).deleteOne({ _id: versionId(datasetId, version) });
}
