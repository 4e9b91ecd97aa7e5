/**
 * Request schemas of datasets and their items (issue #47 item 1). The bounds are the ones docs/evals.md states: they
 * keep one change (one version) and one item small enough to write, list and replay without surprises.
 */
import { z } from 'zod';
import { pageQuery } from '../http/pagination';
import { queryInteger } from '../http/query-integer';
import { jsonData, jsonDataObject } from './json';

/** Items one request may add (by body, import or from runs): one change, one version. */
export const MAX_ITEMS_PER_CHANGE = 1000;
/** Items a dataset may hold in one version. */
export const MAX_ITEMS_PER_DATASET = 10_000;
/** An item's input, expected and metadata together, as JSON text. */
export const MAX_ITEM_BYTES = 256 * 1024;
/** Datasets one user may have. */
export const MAX_DATASETS_PER_USER = 200;
/** Runs one from-runs request may name, or its search may take. */
export const MAX_RUNS_PER_REQUEST = 200;

const ENDED = ['completed', 'failed', 'cancelled', 'timed_out'] as const;

const name = z.string().min(1).max(100).meta({ description: 'Unique among your datasets.' });
const description = z.string().max(2000);
const runId = z.string().min(1).max(600);

export const datasetParams = z.strictObject({ id: z.string().min(1) });
export const datasetItemParams = z.strictObject({ id: z.string().min(1), itemId: z.string().min(1) });

export const createDatasetBody = z.strictObject({
  name,
  description: description.optional(),
  workflow_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: "The workflow the dataset is for: every item's input must satisfy its input_schema." }),
});

export const updateDatasetBody = z
  .strictObject({ name: name.optional(), description: description.nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  .meta({ minProperties: 1 });

/** One item as a client writes it (a body's `items[]`, a JSONL line). */
export const datasetItemInput = z.strictObject({
  input: jsonDataObject.meta({ description: "The run input; checked against the dataset's workflow input_schema." }),
  expected: jsonData.optional().meta({ description: 'What a good answer is (absent or null: none).' }),
  metadata: jsonDataObject.optional().meta({ description: 'Free-form labels (default {}).' }),
  source_run_id: runId.optional().meta({ description: 'The run the item was recorded from, if any.' }),
});

export type DatasetItemInput = z.output<typeof datasetItemInput>;

export const addItemsBody = z.strictObject({
  items: z.array(datasetItemInput).min(1).max(MAX_ITEMS_PER_CHANGE),
});

export const updateItemBody = z
  .strictObject({
    input: datasetItemInput.shape.input.optional(),
    expected: jsonData.optional().meta({ description: 'null removes the expected value.' }),
    metadata: jsonDataObject.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  .meta({ minProperties: 1 });

const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

/** A run search (as GET /api/v1/runs filters), limited to runs that have ended. */
export const itemsRunSearch = z.strictObject({
  workflow_id: z.string().min(1).max(100).optional(),
  status: z
    .array(z.enum(ENDED))
    .min(1)
    .max(ENDED.length)
    .optional()
    .meta({ description: 'Ended statuses only (default ["completed"]).' }),
  created_after: instant.optional(),
  created_before: instant.optional(),
  q: z.string().min(1).max(100).optional().meta({ description: 'Text the workflow name contains.' }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_RUNS_PER_REQUEST)
    .optional()
    .meta({ description: 'The newest this many matching runs (default 50).' }),
});

export const itemsFromRunsBody = z
  .strictObject({
    run_ids: z.array(runId).min(1).max(MAX_RUNS_PER_REQUEST).optional(),
    search: itemsRunSearch.optional(),
  })
  .refine((b) => (b.run_ids === undefined) !== (b.search === undefined), {
    message: 'give exactly one of run_ids or search',
  })
  .meta({
    oneOf: [
      { type: 'object', required: ['run_ids'], properties: { run_ids: {} } },
      { type: 'object', required: ['search'], properties: { search: {} } },
    ],
  });

export const importItemsBody = z.strictObject({
  jsonl: z.string().min(1).meta({
    description: 'One item per line (`{"input": …, "expected": …, "metadata": …}`); blank lines are skipped.',
  }),
});

/** `?version=`: a committed version (default the latest). */
export const versionQuery = z.strictObject({
  version: queryInteger({ min: 0, max: Number.MAX_SAFE_INTEGER - 1 })
    .optional()
    .meta({ description: 'A committed version (default the latest).' }),
});

export const listItemsQuery = pageQuery.extend(versionQuery.shape);
