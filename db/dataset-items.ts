/**
 * The `dataset_items` collection: the rows of every dataset's items across its versions. A row is one item as it was
 * from version `added_in` until the version `removed_in` that changed or removed it (exclusive); the item is in
 * version v when `added_in <= v < removed_in`. A change never rewrites a row's content: it closes the old row
 * (sets `removed_in`) and adds a new one, so every committed version stays readable exactly as it was
 * (docs/decisions/0610-dataset-versions.md). Rows are written only through ./dataset-changes.ts.
 *
 * Values are kept as JSON text, as run outputs are (db/runs.ts): an item's `expected` is often a run's output, whose
 * keys MongoDB may refuse (`$…`, dotted).
 */
import type { Db, Filter, FindCursor } from 'mongodb';
import { findPage, type Page, type PageRequest } from './paging';

/** `removed_in` of a row still in the latest version: above every version there will be. */
export const OPEN_ROW = Number.MAX_SAFE_INTEGER;

export interface DatasetItemDoc {
  /** `<item_id>@<added_in>`: one row per item and version, so a retried write cannot add a row twice. */
  _id: string;
  /** The item's id (`itm_…`), the same in every version. */
  item_id: string;
  dataset_id: string;
  owner_id: string;
  added_in: number;
  /** The version that changed or removed the item; OPEN_ROW while it is in the latest version. */
  removed_in: number;
  input_json: string;
  /** Null: no expected value. */
  expected_json: string | null;
  metadata_json: string;
  /** The run the item was recorded from (its record serves a replay); null for items written by hand. */
  source_run_id: string | null;
  /** When the item was first added, kept by every later row of it: the order of a version's list. */
  created_at: Date;
  /** When this row was written. */
  updated_at: Date;
}

export function datasetItemsCollection(db: Db) {
  return db.collection<DatasetItemDoc>('dataset_items');
}

/** The rows of a dataset's items in `version`. */
export function itemsAt(datasetId: string, version: number): Filter<DatasetItemDoc> {
  return { dataset_id: datasetId, added_in: { $lte: version }, removed_in: { $gt: version } };
}

/** One page of the items in `version`, in the order they were first added. */
export async function findItemsPage(
  db: Db,
  datasetId: string,
  version: number,
  page: PageRequest,
): Promise<Page<DatasetItemDoc>> {
  return findPage(datasetItemsCollection(db), itemsAt(datasetId, version), page, {
    sortField: 'created_at',
    direction: 1,
  });
}

/** Every item of `version`, in list order, read as a cursor (an export streams it). */
export function itemsCursor(db: Db, datasetId: string, version: number): FindCursor<DatasetItemDoc> {
  return datasetItemsCollection(db).find(itemsAt(datasetId, version)).sort({ created_at: 1, _id: 1 });
}

/** One item as it was in `version`, or null. */
export async function findItemAt(
  db: Db,
  datasetId: string,
  itemId: string,
  version: number,
): Promise<DatasetItemDoc | null> {
  return datasetItemsCollection(db).findOne({ ...itemsAt(datasetId, version), item_id: itemId });
}

export async function countItemsAt(db: Db, datasetId: string, version: number): Promise<number> {
  return datasetItemsCollection(db).countDocuments(itemsAt(datasetId, version));
}

export async function insertItemRows(db: Db, rows: DatasetItemDoc[]): Promise<void> {
  if (rows.length > 0) await datasetItemsCollection(db).insertMany(rows, { ordered: false });
}

/** Closes open rows: from `version` on, these items are as a later row says, or gone. */
export async function closeItemRows(db: Db, datasetId: string, rowIds: string[], version: number): Promise<void> {
  if (rowIds.length === 0) return;
  await datasetItemsCollection(db).updateMany(
    { dataset_id: datasetId, _id: { $in: rowIds }, removed_in: OPEN_ROW },
    { $set: { removed_in: version } },
  );
}

/** Undoes every row write of an uncommitted version (a change that failed or whose process stopped). */
export async function discardItemRows(db: Db, datasetId: string, version: number): Promise<void> {
  await datasetItemsCollection(db).deleteMany({ dataset_id: datasetId, added_in: version });
  await datasetItemsCollection(db).updateMany(
    { dataset_id: datasetId, removed_in: version },
    { $set: { removed_in: OPEN_ROW } },
  );
}
