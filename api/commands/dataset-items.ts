/**
 * Changes to a dataset's items, each one new version (db/dataset-changes.ts): add (from a body, an import or runs),
 * update, remove. Every item is checked before anything is written — its size, and its input against the dataset's
 * workflow input_schema — and a refusal names the item (`items[3]`, `line 7`, `run run_…`) with the schema's message.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { changeDataset, DatasetBusyError, type ChangeSummary } from '../../db/dataset-changes';
import { closeItemRows, findItemAt, insertItemRows, OPEN_ROW, type DatasetItemDoc } from '../../db/dataset-items';
import type { DatasetDoc } from '../../db/datasets';
import type { DatasetChangeKind } from '../../db/dataset-versions';
import { findWorkflow } from '../../db/workflows';
import type { JsonObject, JsonValue } from '../../domain/json';
import { ApiError, BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import type { InputValidators } from './input-validators';
import { presentDatasetItem, type DatasetChangeView } from '../presenters/dataset';
import { MAX_ITEM_BYTES, MAX_ITEMS_PER_DATASET, type DatasetItemInput } from '../schemas/datasets';

export interface DatasetCommandDeps {
  db: Db;
  inputValidators: InputValidators;
}

/** An item about to be written, with the name a refusal gives it. */
export interface LabelledItem {
  label: string;
  item: DatasetItemInput;
}

/** Item values as stored (JSON text). */
interface ItemText {
  input_json: string;
  expected_json: string | null;
  metadata_json: string;
}

function itemText(item: { input: JsonObject; expected?: JsonValue | undefined; metadata?: JsonObject | undefined }) {
  return {
    input_json: JSON.stringify(item.input),
    expected_json: item.expected === undefined || item.expected === null ? null : JSON.stringify(item.expected),
    metadata_json: JSON.stringify(item.metadata ?? {}),
  } satisfies ItemText;
}

/**
 * The checker of items for this dataset: size, then the input against the dataset's workflow input_schema. A
 * dataset whose workflow has since been deleted checks sizes only (there is no schema left to hold items to).
 */
export async function itemChecker(deps: DatasetCommandDeps, dataset: DatasetDoc) {
  const workflow = dataset.workflow_id ? await findWorkflow(deps.db, dataset.owner_id, dataset.workflow_id) : null;
  return (label: string, values: { input: JsonObject; expected?: JsonValue; metadata?: JsonObject }): ItemText => {
    const text = itemText(values);
    const bytes =
      Buffer.byteLength(text.input_json) +
      Buffer.byteLength(text.expected_json ?? '') +
      Buffer.byteLength(text.metadata_json);
    if (bytes > MAX_ITEM_BYTES) {
      throw new BadRequestError(
        `${label}: the item is ${Math.ceil(bytes / 1024)} KiB; at most ${MAX_ITEM_BYTES / 1024} KiB (input, expected and metadata together)`,
        'item_too_large',
      );
    }
    if (workflow) {
      try {
        deps.inputValidators.check(workflow, values.input);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        throw new BadRequestError(
          `${label}: the input does not satisfy the input_schema of workflow ${workflow._id}: ${err.message}`,
          'invalid_input',
        );
      }
    }
    return text;
  };
}

/**
 * The id of the `index`-th item of a batch added at `at`: `itm_` + the time and the index in fixed-width base 36 +
 * randomness. Ids of one batch sort in the order given, so the list (by `created_at`, then `_id`) keeps it; an item
 * keeps its id and first time in every later version. The shape of `db/ids.ts` (`isId('itm', …)`).
 */
export function batchItemId(at: Date, index: number): string {
  const time = at.getTime().toString(36).padStart(9, '0');
  return `itm_${time}${index.toString(36).padStart(3, '0')}${randomBytes(6).toString('base64url')}`;
}

/** A DatasetBusyError as the API answers it; null (no such dataset) as a 404. */
async function change<T>(
  deps: DatasetCommandDeps,
  dataset: DatasetDoc,
  apply: Parameters<typeof changeDataset<T>>[3],
): Promise<{ dataset: DatasetDoc; result: T }> {
  try {
    const done = await changeDataset(deps.db, dataset.owner_id, dataset._id, apply);
    if (!done) throw new NotFoundError(`dataset ${dataset._id} not found`);
    return done;
  } catch (err) {
    if (err instanceof DatasetBusyError) throw new ConflictError(err.message, 'dataset_busy');
    throw err;
  }
}

/** Adds items as one new version; everything is checked first, and nothing is written when one is refused. */
export async function addItems(
  deps: DatasetCommandDeps,
  dataset: DatasetDoc,
  items: LabelledItem[],
  kind: Extract<DatasetChangeKind, 'items_added' | 'imported' | 'from_runs'>,
  opts: { listItems?: boolean } = {},
): Promise<DatasetChangeView> {
  const check = await itemChecker(deps, dataset);
  const texts = items.map(({ label, item }) => check(label, item));
  const done = await change(deps, dataset, async ({ dataset: locked, version, now }) => {
    if (locked.item_count + items.length > MAX_ITEMS_PER_DATASET) {
      throw new ConflictError(
        `the dataset holds ${locked.item_count} items; ${items.length} more would pass the limit of ${MAX_ITEMS_PER_DATASET}`,
        'dataset_full',
      );
    }
    const rows: DatasetItemDoc[] = items.map(({ item }, i) => {
      const itemId = batchItemId(now, i);
      return {
        _id: `${itemId}@${version}`,
        item_id: itemId,
        dataset_id: locked._id,
        owner_id: locked.owner_id,
        added_in: version,
        removed_in: OPEN_ROW,
        ...texts[i]!,
        source_run_id: item.source_run_id ?? null,
        // One time for the batch: the list orders by it, then by _id, whose item id keeps the batch's order.
        created_at: now,
        updated_at: now,
      };
    });
    await insertItemRows(deps.db, rows);
    const summary: ChangeSummary = { change: kind, added: rows.length, updated: 0, removed: 0 };
    return { result: rows, summary };
  });
  return {
    dataset_id: done.dataset._id,
    version: done.dataset.version,
    item_count: done.dataset.item_count,
    added: done.result.length,
    items: opts.listItems === false ? [] : done.result.map(presentDatasetItem),
  };
}

/** Changes one item as a new version: its old form stays in the versions before. */
export async function updateItem(
  deps: DatasetCommandDeps,
  dataset: DatasetDoc,
  itemId: string,
  set: { input?: JsonObject | undefined; expected?: JsonValue | undefined; metadata?: JsonObject | undefined },
): Promise<DatasetChangeView> {
  const before = await findItemAt(deps.db, dataset._id, itemId, dataset.version);
  if (!before) throw new NotFoundError(`item ${itemId} not found in dataset ${dataset._id}`);
  const old = {
    input: JSON.parse(before.input_json) as JsonObject,
    expected: before.expected_json === null ? undefined : (JSON.parse(before.expected_json) as JsonValue),
    metadata: JSON.parse(before.metadata_json) as JsonObject,
  };
  const next = {
    input: set.input ?? old.input,
    expected: 'expected' in set ? set.expected : old.expected,
    metadata: set.metadata ?? old.metadata,
  };
  const text = (await itemChecker(deps, dataset))(`item ${itemId}`, next);
  const done = await change(deps, dataset, async ({ dataset: locked, version, now }) => {
    // Read again under the lock: the item may have changed or gone since the read above.
    const current = await findItemAt(deps.db, locked._id, itemId, locked.version);
    if (!current) throw new NotFoundError(`item ${itemId} not found in dataset ${locked._id}`);
    await closeItemRows(deps.db, locked._id, [current._id], version);
    const row: DatasetItemDoc = {
      ...current,
      ...text,
      _id: `${itemId}@${version}`,
      added_in: version,
      removed_in: OPEN_ROW,
      updated_at: now,
    };
    await insertItemRows(deps.db, [row]);
    return { result: row, summary: { change: 'item_updated', added: 0, updated: 1, removed: 0 } };
  });
  return {
    dataset_id: done.dataset._id,
    version: done.dataset.version,
    item_count: done.dataset.item_count,
    added: 0,
    items: [presentDatasetItem(done.result)],
  };
}

/** Removes one item as a new version: it stays in the versions before. */
export async function removeItem(
  deps: DatasetCommandDeps,
  dataset: DatasetDoc,
  itemId: string,
): Promise<DatasetChangeView> {
  const done = await change(deps, dataset, async ({ dataset: locked, version }) => {
    const current = await findItemAt(deps.db, locked._id, itemId, locked.version);
    if (!current) throw new NotFoundError(`item ${itemId} not found in dataset ${locked._id}`);
    await closeItemRows(deps.db, locked._id, [current._id], version);
    return { result: null, summary: { change: 'items_removed', added: 0, updated: 0, removed: 1 } };
  });
  return {
    dataset_id: done.dataset._id,
    version: done.dataset.version,
    item_count: done.dataset.item_count,
    added: 0,
    items: [],
  };
}
