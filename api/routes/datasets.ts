/**
 * Datasets (issue #47 item 1): named sets of items `{input, expected?, metadata, source_run_id?}` an experiment runs
 * a workflow over. Every change to the items is a new version, and every version stays readable as it was
 * (`?version=N`; docs/decisions/0610-dataset-versions.md). Items come from a body, a JSONL import or recorded runs;
 * a dataset for a workflow holds only inputs its input_schema takes. Owner-scoped: another user's id is a 404.
 */
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import { userId } from '../http/caller';
import { isDuplicateKey } from '../../db/duplicate-key';
import { findItemAt, findItemsPage, itemsCursor } from '../../db/dataset-items';
import {
  countOwnDatasets,
  datasetsCollection,
  deleteOwnDataset,
  findOwnDataset,
  insertDataset,
  updateOwnDataset,
  type DatasetDoc,
} from '../../db/datasets';
import { findVersionsPage, insertDatasetVersion, versionId } from '../../db/dataset-versions';
import { isId, newId } from '../../db/ids';
import { addItems, removeItem, updateItem, type DatasetCommandDeps } from '../commands/dataset-items';
import { itemsOfRuns, runsById, runsBySearch } from '../commands/dataset-from-runs';
import { parseItemsJsonl } from '../commands/dataset-import';
import { respond } from '../http/envelope';
import { ConflictError, NotFoundError } from '../http/errors';
import { pageOrBadRequest, pageQuery, paginate, setNextLink } from '../http/pagination';
import { authenticated, ownWorkflow } from '../http/route-deps';
import { validate } from '../middleware/validate';
import { exportLine, presentDataset, presentDatasetItem, presentDatasetVersion } from '../presenters/dataset';
import type { ApiDeps } from '../deps';
import {
  addItemsBody,
  createDatasetBody,
  datasetItemParams,
  datasetParams,
  importItemsBody,
  itemsFromRunsBody,
  listItemsQuery,
  MAX_DATASETS_PER_USER,
  updateDatasetBody,
  updateItemBody,
  versionQuery,
} from '../schemas/datasets';

export const listDatasets = validate({ query: pageQuery });
export const createDataset = validate({ body: createDatasetBody });
export const getDataset = validate({ params: datasetParams });
export const patchDataset = validate({ params: datasetParams, body: updateDatasetBody });
export const removeDataset = validate({ params: datasetParams });
export const listVersions = validate({ params: datasetParams, query: pageQuery });
export const listItems = validate({ params: datasetParams, query: listItemsQuery });
export const getItem = validate({ params: datasetItemParams, query: versionQuery });
export const addItemsRoute = validate({ params: datasetParams, body: addItemsBody });
export const patchItem = validate({ params: datasetItemParams, body: updateItemBody });
export const removeItemRoute = validate({ params: datasetItemParams });
export const fromRuns = validate({ params: datasetParams, body: itemsFromRunsBody });
export const importItems = validate({ params: datasetParams, body: importItemsBody });
export const exportItems = validate({ params: datasetParams, query: versionQuery });

export function datasetRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);
  const commands: DatasetCommandDeps = { db: deps.db, inputValidators: deps.inputValidators };

  const ownDataset = async (ctx: Context, id: string): Promise<DatasetDoc> => {
    const dataset = isId('ds', id) ? await findOwnDataset(deps.db, userId(ctx), id) : null;
    if (!dataset) throw new NotFoundError(`dataset ${id} not found`);
    return dataset;
  };
  /** The version asked for (default the latest); one not committed yet is a 404, like an unknown id. */
  const versionOf = (dataset: DatasetDoc, asked: number | undefined): number => {
    if (asked === undefined) return dataset.version;
    if (asked > dataset.version) {
      throw new NotFoundError(`dataset ${dataset._id} has no version ${asked} (the latest is ${dataset.version})`);
    }
    return asked;
  };
  const duplicateName = (err: unknown, name: string | undefined) => {
    if (isDuplicateKey(err)) throw new ConflictError(`a dataset named "${name ?? ''}" already exists`, 'name_taken');
    throw err;
  };

  router.get('/datasets', ...auth, listDatasets, async (ctx) => {
    const { query } = listDatasets.input(ctx);
    const docs = await paginate(ctx, {
      collection: datasetsCollection(deps.db),
      filter: { owner_id: userId(ctx) },
      page: query,
      order: { sortField: 'created_at', direction: -1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentDataset));
  });

  router.post('/datasets', ...auth, createDataset, async (ctx) => {
    const { body } = createDataset.input(ctx);
    const owner = userId(ctx);
    const workflow = body.workflow_id !== undefined ? await ownWorkflow(deps, ctx, body.workflow_id) : null;
    const count = await countOwnDatasets(deps.db, owner);
    if (count >= MAX_DATASETS_PER_USER) {
      throw new ConflictError(`you already have ${count} datasets (the limit); delete one first`, 'too_many_datasets');
    }
    const now = new Date();
    const doc: DatasetDoc = {
      _id: newId('ds'),
      owner_id: owner,
      name: body.name,
      description: body.description ?? null,
      workflow_id: workflow?._id ?? null,
      version: 0,
      item_count: 0,
      changing: null,
      created_at: now,
      updated_at: now,
    };
    await insertDataset(deps.db, doc).catch((err: unknown) => duplicateName(err, body.name));
    await insertDatasetVersion(deps.db, {
      _id: versionId(doc._id, 0),
      dataset_id: doc._id,
      owner_id: owner,
      version: 0,
      change: 'created',
      added: 0,
      updated: 0,
      removed: 0,
      item_count: 0,
      created_at: now,
    });
    ctx.set('Location', `/api/v1/datasets/${doc._id}`);
    respond(ctx, 201, presentDataset(doc));
  });

  router.get('/datasets/:id', ...auth, getDataset, async (ctx) => {
    const { params } = getDataset.input(ctx);
    respond(ctx, 200, presentDataset(await ownDataset(ctx, params.id)));
  });

  router.patch('/datasets/:id', ...auth, patchDataset, async (ctx) => {
    const { params, body } = patchDataset.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const updated = await updateOwnDataset(deps.db, userId(ctx), dataset._id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
    }).catch((err: unknown) => duplicateName(err, body.name));
    if (!updated) throw new NotFoundError(`dataset ${params.id} not found`);
    respond(ctx, 200, presentDataset(updated));
  });

  router.delete('/datasets/:id', ...auth, removeDataset, async (ctx) => {
    const { params } = removeDataset.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    if (!(await deleteOwnDataset(deps.db, userId(ctx), dataset._id))) {
      throw new NotFoundError(`dataset ${params.id} not found`);
    }
    respond(ctx, 200, { id: dataset._id, deleted: true });
  });

  router.get('/datasets/:id/versions', ...auth, listVersions, async (ctx) => {
    const { params, query } = listVersions.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const page = await pageOrBadRequest(() => findVersionsPage(deps.db, dataset._id, query));
    setNextLink(ctx, page.nextCursor, deps.config.PUBLIC_URL);
    respond(ctx, 200, page.items.map(presentDatasetVersion));
  });

  router.get('/datasets/:id/items', ...auth, listItems, async (ctx) => {
    const { params, query } = listItems.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const version = versionOf(dataset, query.version);
    const page = await pageOrBadRequest(() => findItemsPage(deps.db, dataset._id, version, query));
    setNextLink(ctx, page.nextCursor, deps.config.PUBLIC_URL);
    respond(ctx, 200, page.items.map(presentDatasetItem));
  });

  router.post('/datasets/:id/items', ...auth, addItemsRoute, async (ctx) => {
    const { params, body } = addItemsRoute.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const items = body.items.map((item, i) => ({ label: `items[${i}]`, item }));
    respond(ctx, 201, await addItems(commands, dataset, items, 'items_added'));
  });

  router.post('/datasets/:id/items/from-runs', ...auth, fromRuns, async (ctx) => {
    const { params, body } = fromRuns.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const runs = body.run_ids
      ? await runsById(deps.db, userId(ctx), body.run_ids)
      : await runsBySearch(deps.db, userId(ctx), body.search ?? {});
    if (runs.length === 0) throw new NotFoundError('search: no ended run of yours matches');
    respond(ctx, 201, await addItems(commands, dataset, await itemsOfRuns(deps.db, runs), 'from_runs'));
  });

  router.post('/datasets/:id/items/import', ...auth, importItems, async (ctx) => {
    const { params, body } = importItems.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const items = parseItemsJsonl(body.jsonl);
    respond(ctx, 201, await addItems(commands, dataset, items, 'imported', { listItems: false }));
  });

  router.get('/datasets/:id/items/export', ...auth, exportItems, async (ctx) => {
    const { params, query } = exportItems.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const version = versionOf(dataset, query.version);
    ctx.set('Content-Disposition', `attachment; filename="${dataset._id}-v${version}.jsonl"`);
    ctx.set('X-Dataset-Version', String(version));
    ctx.type = 'application/x-ndjson';
    ctx.status = 200;
    ctx.body = Readable.from(exportStream(itemsCursor(deps.db, dataset._id, version)));
  });

  router.get('/datasets/:id/items/:itemId', ...auth, getItem, async (ctx) => {
    const { params, query } = getItem.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    const version = versionOf(dataset, query.version);
    const item = isId('itm', params.itemId) ? await findItemAt(deps.db, dataset._id, params.itemId, version) : null;
    if (!item) throw new NotFoundError(`item ${params.itemId} not found in version ${version}`);
    respond(ctx, 200, presentDatasetItem(item));
  });

  router.patch('/datasets/:id/items/:itemId', ...auth, patchItem, async (ctx) => {
    const { params, body } = patchItem.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    if (!isId('itm', params.itemId)) throw new NotFoundError(`item ${params.itemId} not found`);
    respond(ctx, 200, await updateItem(commands, dataset, params.itemId, body));
  });

  router.delete('/datasets/:id/items/:itemId', ...auth, removeItemRoute, async (ctx) => {
    const { params } = removeItemRoute.input(ctx);
    const dataset = await ownDataset(ctx, params.id);
    if (!isId('itm', params.itemId)) throw new NotFoundError(`item ${params.itemId} not found`);
    respond(ctx, 200, await removeItem(commands, dataset, params.itemId));
  });

  return router;
}

/** The export's body: one line per item, read from the cursor as the client takes them (never all in memory). */
async function* exportStream(cursor: AsyncIterable<Parameters<typeof exportLine>[0]>): AsyncGenerator<string> {
  for await (const doc of cursor) yield `${exportLine(doc)}\n`;
}
