/**
 * How a change to a dataset's items becomes a version (docs/decisions/0610-dataset-versions.md), without
 * transactions (the embedded server and a standalone mongod have none):
 *
 * 1. take the dataset's change lock, naming the version it will commit (committed + 1);
 * 2. undo any row a crashed holder left at that version (./dataset-items.ts discardItemRows);
 * 3. write the rows (added, closed) at that version;
 * 4. record the version, then commit: `version`, `item_count` and the lock's release in one conditional update.
 *
 * Readers read at the committed `version`, so rows of a change under way (added_in above it, or removed_in equal to
 * a version no one reads yet) are never seen. One change at a time per dataset: another waits a moment, then gets
 * DatasetBusyError. A lock older than STALE_LOCK_MS is a holder that stopped: the next change takes it over.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { datasetsCollection, type DatasetDoc } from './datasets';
import { countItemsAt, discardItemRows } from './dataset-items';
import { discardDatasetVersion, insertDatasetVersion, versionId, type DatasetChangeKind } from './dataset-versions';

/** A change holds the lock this long at most; bounded changes (MAX_ITEMS_PER_REQUEST) take well under a second. */
const STALE_LOCK_MS = 60_000;
/** How long a change waits for another one to finish before it gives up. */
const WAIT_MS = 5_000;
const RETRY_MS = 25;

/** Another change of the dataset is under way (and did not finish in time), or this one lost its lock. */
export class DatasetBusyError extends Error {
  constructor(datasetId: string) {
    super(`dataset ${datasetId} is being changed by another request; try again`);
    this.name = 'DatasetBusyError';
  }
}

/** What a change writes, given the locked dataset and the version it makes. */
export interface ChangeContext {
  dataset: DatasetDoc;
  version: number;
  now: Date;
}

export interface ChangeSummary {
  change: DatasetChangeKind;
  added: number;
  updated: number;
  removed: number;
}

/**
 * Runs `apply` as one new version of the owner's dataset; null when there is no such dataset. `apply` writes rows at
 * `ctx.version` only (through ./dataset-items.ts) and may throw: its writes are then undone and nothing is committed.
 */
export async function changeDataset<T>(
  db: Db,
  ownerId: string,
  datasetId: string,
  apply: (ctx: ChangeContext) => Promise<{ result: T; summary: ChangeSummary }>,
): Promise<{ dataset: DatasetDoc; result: T } | null> {
  const locked = await acquire(db, ownerId, datasetId);
  if (!locked) return null;
  const { dataset, token } = locked;
  const version = dataset.version + 1;
  const now = new Date();
  let applied: { result: T; summary: ChangeSummary };
  try {
    await discardItemRows(db, datasetId, version);
    await discardDatasetVersion(db, datasetId, version);
    applied = await apply({ dataset, version, now });
    const itemCount = await countItemsAt(db, datasetId, version);
    await insertDatasetVersion(db, {
      _id: versionId(datasetId, version),
      dataset_id: datasetId,
      owner_id: ownerId,
      version,
      ...applied.summary,
      item_count: itemCount,
      created_at: now,
    });
    const committed = await datasetsCollection(db).findOneAndUpdate(
      { _id: datasetId, 'changing.token': token },
      { $set: { version, item_count: itemCount, changing: null, updated_at: now } },
      { returnDocument: 'after' },
    );
    // Held past STALE_LOCK_MS and taken over: the new holder undoes these rows.
    if (!committed) throw new DatasetBusyError(datasetId);
    return { dataset: committed, result: applied.result };
  } catch (err) {
    await rollBack(db, datasetId, version, token).catch(() => undefined);
    throw err;
  }
}

async function rollBack(db: Db, datasetId: string, version: number, token: string): Promise<void> {
  const still = await datasetsCollection(db).findOne({ _id: datasetId, 'changing.token': token });
  if (!still) return;
  await discardItemRows(db, datasetId, version);
  await discardDatasetVersion(db, datasetId, version);
  await datasetsCollection(db).updateOne({ _id: datasetId, 'changing.token': token }, { $set: { changing: null } });
}

async function acquire(
  db: Db,
  ownerId: string,
  datasetId: string,
): Promise<{ dataset: DatasetDoc; token: string } | null> {
  const token = randomBytes(12).toString('base64url');
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const dataset = await datasetsCollection(db).findOne({ _id: datasetId, owner_id: ownerId });
    if (!dataset) return null;
    const held = dataset.changing;
    if (!held || held.at.getTime() < Date.now() - STALE_LOCK_MS) {
      // Conditional on what was read: of two requests that read the same state, one gets the lock.
      const taken = await datasetsCollection(db).findOneAndUpdate(
        {
          _id: datasetId,
          owner_id: ownerId,
          version: dataset.version,
          ...(held ? { 'changing.token': held.token } : { changing: null }),
        },
        { $set: { changing: { version: dataset.version + 1, token, at: new Date() } } },
        { returnDocument: 'after' },
      );
      if (taken) return { dataset: taken, token };
    }
    if (Date.now() >= deadline) throw new DatasetBusyError(datasetId);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
