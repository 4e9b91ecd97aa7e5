/** Dataset, its versions and its items → JSON. Item values are stored as JSON text (db/dataset-items.ts). */
import { z } from 'zod';
import type { DatasetDoc } from '../../db/datasets';
import { OPEN_ROW, type DatasetItemDoc } from '../../db/dataset-items';
import type { DatasetVersionDoc } from '../../db/dataset-versions';
import type { JsonObject, JsonValue } from '../../domain/json';
import { iso, isoTimestamp, jsonObjectView } from './common';

export const datasetView = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    workflow_id: z.string().nullable(),
    version: z
      .number()
      .int()
      .meta({ description: 'The latest version (0: no change yet). Every item change adds one.' }),
    item_count: z.number().int().meta({ description: 'Items in the latest version.' }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'Dataset' });

export const datasetVersionView = z
  .strictObject({
    version: z.number().int(),
    change: z.enum(['created', 'items_added', 'item_updated', 'items_removed', 'imported', 'from_runs']),
    added: z.number().int(),
    updated: z.number().int(),
    removed: z.number().int(),
    item_count: z.number().int(),
    created_at: isoTimestamp,
  })
  .meta({ id: 'DatasetVersion' });

export const datasetItemView = z
  .strictObject({
    id: z.string().meta({ description: 'The same in every version of the item.' }),
    input: jsonObjectView,
    expected: z.unknown().meta({ description: 'What a good answer is; null when there is none.' }),
    metadata: jsonObjectView,
    source_run_id: z.string().nullable().meta({
      description: 'The run the item was recorded from (its record serves a replay); null if written by hand.',
    }),
    added_in: z.number().int().meta({ description: 'The version this form of the item first appeared in.' }),
    removed_in: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The version that changed or removed it; null while it is in the latest version.' }),
    created_at: isoTimestamp.meta({ description: 'When the item was first added.' }),
    updated_at: isoTimestamp.meta({ description: 'When this form of the item was written.' }),
  })
  .meta({ id: 'DatasetItem' });

/** The answer of every item change: the version it made and what it wrote. */
export const datasetChangeView = z
  .strictObject({
    dataset_id: z.string(),
    version: z.number().int().meta({ description: 'The version the change made.' }),
    item_count: z.number().int(),
    added: z.number().int(),
    items: z.array(datasetItemView).meta({ description: 'The items written (for an import: none, see `added`).' }),
  })
  .meta({ id: 'DatasetChange' });

export type DatasetView = z.infer<typeof datasetView>;
export type DatasetItemView = z.infer<typeof datasetItemView>;
export type DatasetChangeView = z.infer<typeof datasetChangeView>;

export function presentDataset(doc: DatasetDoc): DatasetView {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description,
    workflow_id: doc.workflow_id,
    version: doc.version,
    item_count: doc.item_count,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}

export function presentDatasetVersion(doc: DatasetVersionDoc): z.infer<typeof datasetVersionView> {
  return {
    version: doc.version,
    change: doc.change,
    added: doc.added,
    updated: doc.updated,
    removed: doc.removed,
    item_count: doc.item_count,
    created_at: iso(doc.created_at),
  };
}

export function presentDatasetItem(doc: DatasetItemDoc): DatasetItemView {
  return {
    id: doc.item_id,
    ...itemValues(doc),
    source_run_id: doc.source_run_id,
    added_in: doc.added_in,
    removed_in: doc.removed_in === OPEN_ROW ? null : doc.removed_in,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}

/** The item's values, parsed. */
export function itemValues(doc: DatasetItemDoc): { input: JsonObject; expected: JsonValue; metadata: JsonObject } {
  return {
    input: JSON.parse(doc.input_json) as JsonObject,
    expected: doc.expected_json === null ? null : (JSON.parse(doc.expected_json) as JsonValue),
    metadata: JSON.parse(doc.metadata_json) as JsonObject,
  };
}

/**
 * One line of an export: exactly what an import takes back (`input`, `expected`, `metadata`, `source_run_id`); keys
 * with no value are left out. The item's id is not in it: an import makes new items.
 */
export function exportLine(doc: DatasetItemDoc): string {
  const { input, expected, metadata } = itemValues(doc);
  return JSON.stringify({
    input,
    ...(doc.expected_json !== null ? { expected } : {}),
    metadata,
    ...(doc.source_run_id !== null ? { source_run_id: doc.source_run_id } : {}),
  });
}
