/** OpenAPI paths of datasets and their versioned items. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { pageQuery } from '../http/pagination';
import { datasetChangeView, datasetItemView, datasetVersionView, datasetView } from '../presenters/dataset';
import {
  addItemsBody,
  createDatasetBody,
  datasetItemParams,
  datasetParams,
  importItemsBody,
  itemsFromRunsBody,
  listItemsQuery,
  MAX_DATASETS_PER_USER,
  MAX_ITEM_BYTES,
  MAX_ITEMS_PER_CHANGE,
  MAX_ITEMS_PER_DATASET,
  updateDatasetBody,
  updateItemBody,
  versionQuery,
} from '../schemas/datasets';

const tags = ['datasets'];
const deleted = z.strictObject({ id: z.string(), deleted: z.literal(true) });
const LIMITS =
  `At most ${MAX_ITEMS_PER_CHANGE} items per change, ${MAX_ITEMS_PER_DATASET} per dataset (409 \`dataset_full\`), ` +
  `${MAX_ITEM_BYTES / 1024} KiB per item (input, expected and metadata together). An input the dataset's workflow ` +
  'input_schema refuses is a 400 naming the item and the schema’s message; nothing is written then. 409 ' +
  '`dataset_busy` when another change of the dataset did not finish within seconds.';

export const datasetsPaths: ZodOpenApiPathsObject = {
  '/api/v1/datasets': {
    get: {
      tags,
      summary: 'Your datasets, newest first',
      security: BEARER,
      requestParams: { query: pageQuery },
      responses: { ...ok(200, 'One page of datasets', z.array(datasetView), { paged: true }), ...errors(400, 401) },
    },
    post: {
      tags,
      summary: 'Create a dataset (version 0, no items)',
      description: `Names are unique among your datasets (409 \`name_taken\`); at most ${MAX_DATASETS_PER_USER} datasets.`,
      security: BEARER,
      requestBody: jsonRequest(createDatasetBody),
      responses: {
        ...ok(201, 'The dataset', datasetView, { location: 'The dataset.' }),
        ...errors(400, 401, 404, 409, 413, 415),
      },
    },
  },
  '/api/v1/datasets/{id}': {
    get: {
      tags,
      summary: 'One dataset, with its latest version and item count',
      security: BEARER,
      requestParams: { path: datasetParams },
      responses: { ...ok(200, 'The dataset', datasetView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Rename or re-describe a dataset (no new version)',
      security: BEARER,
      requestParams: { path: datasetParams },
      requestBody: jsonRequest(updateDatasetBody),
      responses: { ...ok(200, 'The dataset', datasetView), ...errors(400, 401, 404, 409, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete a dataset with every version of its items',
      security: BEARER,
      requestParams: { path: datasetParams },
      responses: { ...ok(200, 'Deleted', deleted), ...errors(401, 404) },
    },
  },
  '/api/v1/datasets/{id}/versions': {
    get: {
      tags,
      summary: "The dataset's versions, newest first",
      security: BEARER,
      requestParams: { path: datasetParams, query: pageQuery },
      responses: {
        ...ok(200, 'One page of versions', z.array(datasetVersionView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/datasets/{id}/items': {
    get: {
      tags,
      summary: 'The items of a version (default the latest), in the order they were added',
      description: 'A version after the latest is a 404. A version, once made, never changes.',
      security: BEARER,
      requestParams: { path: datasetParams, query: listItemsQuery },
      responses: {
        ...ok(200, 'One page of items', z.array(datasetItemView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
    post: {
      tags,
      summary: 'Add items: one new version',
      description: LIMITS,
      security: BEARER,
      requestParams: { path: datasetParams },
      requestBody: jsonRequest(addItemsBody),
      responses: { ...ok(201, 'The version made', datasetChangeView), ...errors(400, 401, 404, 409, 413, 415) },
    },
  },
  '/api/v1/datasets/{id}/items/from-runs': {
    post: {
      tags,
      summary: 'Add your ended runs as items: input, outputs as `expected`, and `source_run_id`',
      description:
        'By `run_ids`, or by a `search` as GET /api/v1/runs filters (ended statuses only, default completed; the ' +
        'newest `limit`, default 50). An unknown id, or another user’s, is a 404 naming it; a run that has not ' +
        `ended is a 409 \`run_not_ended\` naming it. ${LIMITS}`,
      security: BEARER,
      requestParams: { path: datasetParams },
      requestBody: jsonRequest(itemsFromRunsBody),
      responses: { ...ok(201, 'The version made', datasetChangeView), ...errors(400, 401, 404, 409, 413, 415) },
    },
  },
  '/api/v1/datasets/{id}/items/import': {
    post: {
      tags,
      summary: 'Import items from JSONL: one new version',
      description:
        'The text is read whole before anything is written: the first bad line is a 400 naming its number (1-based, ' +
        `blank lines counted) and nothing is imported. The body's size limit is BODY_LIMIT_BYTES. ${LIMITS}`,
      security: BEARER,
      requestParams: { path: datasetParams },
      requestBody: jsonRequest(importItemsBody),
      responses: { ...ok(201, 'The version made', datasetChangeView), ...errors(400, 401, 404, 409, 413, 415) },
    },
  },
  '/api/v1/datasets/{id}/items/export': {
    get: {
      tags,
      summary: 'Export the items of a version (default the latest) as JSONL',
      description:
        'One item per line, `{input, expected?, metadata, source_run_id?}`: what the import takes back. The ' +
        '`X-Dataset-Version` header names the version exported.',
      security: BEARER,
      requestParams: { path: datasetParams, query: versionQuery },
      responses: {
        200: {
          description: 'The items, one JSON object per line',
          headers: z.strictObject({
            'X-Dataset-Version': z.string().meta({ description: 'The version exported.' }),
          }),
          content: { 'application/x-ndjson': { schema: z.string() } },
        },
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/datasets/{id}/items/{itemId}': {
    get: {
      tags,
      summary: 'One item as it was in a version (default the latest)',
      security: BEARER,
      requestParams: { path: datasetItemParams, query: versionQuery },
      responses: { ...ok(200, 'The item', datasetItemView), ...errors(400, 401, 404) },
    },
    patch: {
      tags,
      summary: 'Change an item: one new version (the old form stays in the versions before)',
      description: LIMITS,
      security: BEARER,
      requestParams: { path: datasetItemParams },
      requestBody: jsonRequest(updateItemBody),
      responses: { ...ok(200, 'The version made', datasetChangeView), ...errors(400, 401, 404, 409, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Remove an item: one new version (it stays in the versions before)',
      security: BEARER,
      requestParams: { path: datasetItemParams },
      responses: { ...ok(200, 'The version made', datasetChangeView), ...errors(401, 404, 409) },
    },
  },
};
