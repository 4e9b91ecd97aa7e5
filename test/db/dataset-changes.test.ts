/**
 * The version protocol of dataset changes (db/dataset-changes.ts) against the real database: concurrent changes get
 * consecutive versions, a change that throws leaves nothing behind, a crashed holder's half-written version is never
 * seen and is undone by the next change, and a live holder makes the next change give up with DatasetBusyError.
 */
import { changeDataset, DatasetBusyError, type ChangeContext } from '../../db/dataset-changes';
import {
  closeItemRows,
  countItemsAt,
  datasetItemsCollection,
  insertItemRows,
  itemsAt,
  OPEN_ROW,
  type DatasetItemDoc,
} from '../../db/dataset-items';
import { datasetsCollection, findOwnDataset, insertDataset } from '../../db/datasets';
import { newId } from '../../db/ids';
import { useTestDb } from '../helpers/stack';

describe('dataset changes', () => {
  const database = useTestDb();
  const owner = 'usr_datasetowner00';

  const newDataset = async () => {
    const now = new Date();
    const id = newId('ds');
    await insertDataset(database.db, {
      _id: id,
      owner_id: owner,
      name: id,
      description: null,
      workflow_id: null,
      version: 0,
      item_count: 0,
      changing: null,
      created_at: now,
      updated_at: now,
    });
    return id;
  };
  const row = (datasetId: string, version: number, label: string): DatasetItemDoc => {
    const itemId = newId('itm');
    return {
      _id: `${itemId}@${version}`,
      item_id: itemId,
      dataset_id: datasetId,
      owner_id: owner,
      added_in: version,
      removed_in: OPEN_ROW,
      input_json: JSON.stringify({ label }),
      expected_json: null,
      metadata_json: '{}',
      source_run_id: null,
      created_at: new Date(),
      updated_at: new Date(),
    };
  };
  /** A change adding one item labelled `label`. */
  const add = (label: string) => async (ctx: ChangeContext) => {
    await insertItemRows(database.db, [row(ctx.dataset._id, ctx.version, label)]);
    return { result: ctx.version, summary: { change: 'items_added' as const, added: 1, updated: 0, removed: 0 } };
  };
  const labelsAt = async (datasetId: string, version: number) =>
    (await datasetItemsCollection(database.db).find(itemsAt(datasetId, version)).toArray())
      .map((r) => (JSON.parse(r.input_json) as { label: string }).label)
      .sort();

  it('gives concurrent changes consecutive versions, each with what came before', async () => {
    const id = await newDataset();
    const versions = await Promise.all(
      ['a', 'b', 'c'].map((l) => changeDataset(database.db, owner, id, add(l)).then((d) => d!.result)),
    );
    expect([...versions].sort()).toEqual([1, 2, 3]);
    expect(await findOwnDataset(database.db, owner, id)).toMatchObject({ version: 3, item_count: 3, changing: null });
    for (const v of [1, 2, 3]) expect(await countItemsAt(database.db, id, v)).toBe(v);
  });

  it('leaves nothing behind when a change throws', async () => {
    const id = await newDataset();
    await changeDataset(database.db, owner, id, add('kept'));
    const failing = async (ctx: ChangeContext) => {
      await insertItemRows(database.db, [row(id, ctx.version, 'lost')]);
      const kept = await datasetItemsCollection(database.db).findOne({ dataset_id: id, added_in: 1 });
      await closeItemRows(database.db, id, [kept!._id], ctx.version);
      throw new Error('refused half way');
    };
    await expect(changeDataset(database.db, owner, id, failing)).rejects.toThrow('refused half way');
    expect(await findOwnDataset(database.db, owner, id)).toMatchObject({ version: 1, item_count: 1, changing: null });
    expect(await datasetItemsCollection(database.db).countDocuments({ dataset_id: id })).toBe(1);
    expect(await labelsAt(id, 1)).toEqual(['kept']);
    expect((await changeDataset(database.db, owner, id, add('next')))!.result).toBe(2);
  });

  it("never shows a crashed holder's rows, and undoes them when the next change takes the stale lock over", async () => {
    const id = await newDataset();
    await changeDataset(database.db, owner, id, add('first'));
    // A holder that stopped half way through version 2, two minutes ago: one row added, the first one closed.
    const first = await datasetItemsCollection(database.db).findOne({ dataset_id: id });
    await insertItemRows(database.db, [row(id, 2, 'half')]);
    await closeItemRows(database.db, id, [first!._id], 2);
    await datasetsCollection(database.db).updateOne(
      { _id: id },
      { $set: { changing: { version: 2, token: 'gone', at: new Date(Date.now() - 120_000) } } },
    );
    expect(await labelsAt(id, 1)).toEqual(['first']);

    const done = await changeDataset(database.db, owner, id, add('second'));
    expect(done!.result).toBe(2);
    expect(await labelsAt(id, 2)).toEqual(['first', 'second']);
    expect(await labelsAt(id, 1)).toEqual(['first']);
    expect(await findOwnDataset(database.db, owner, id)).toMatchObject({ version: 2, item_count: 2, changing: null });
  });

  it('gives up with DatasetBusyError while a live holder keeps the lock', async () => {
    const id = await newDataset();
    await datasetsCollection(database.db).updateOne(
      { _id: id },
      { $set: { changing: { version: 1, token: 'live', at: new Date() } } },
    );
    await expect(changeDataset(database.db, owner, id, add('x'))).rejects.toBeInstanceOf(DatasetBusyError);
    expect(await datasetItemsCollection(database.db).countDocuments({ dataset_id: id })).toBe(0);
  }, 20_000);

  it('answers null for a dataset the owner does not have', async () => {
    const id = await newDataset();
    expect(await changeDataset(database.db, 'usr_someoneelse00', id, add('x'))).toBeNull();
  });
});
