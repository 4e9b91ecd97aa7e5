/**
 * Inbound webhooks (`hooks`): public endpoints that start a run of one workflow (POST /api/v1/hooks/:hookId). The id
 * is the capability — 24 random bytes, so it cannot be guessed — and is found by `_id` only. A hook may require
 * Standard Webhooks signatures with its own secret, kept as it is (HMAC needs the key, not a hash of it).
 */
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { WEBHOOK_SECRET_PREFIX } from './users';

export interface HookDoc {
  /** `hook_<32 base64url characters>`: unguessable. */
  _id: string;
  owner_id: string;
  workflow_id: string;
  name: string | null;
  /** Null: deliveries are not signed (the id alone authorises them). */
  secret: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export function hooksCollection(db: Db) {
  return db.collection<HookDoc>('hooks');
}

export function newHookId(): string {
  return `hook_${randomBytes(24).toString('base64url')}`;
}

export function newHookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export async function insertHook(db: Db, doc: HookDoc): Promise<void> {
  await hooksCollection(db).insertOne(doc);
}

/** An owner's hook of one workflow, or null. */
export async function findOwnHook(db: Db, ownerId: string, workflowId: string, hookId: string) {
  return hooksCollection(db).findOne({ _id: hookId, owner_id: ownerId, workflow_id: workflowId });
}

/** Any hook by id: for the public endpoint, which then answers the same 404 for missing and disabled ones. */
export async function findHook(db: Db, hookId: string) {
  return hooksCollection(db).findOne({ _id: hookId });
}

export async function updateOwnHook(
  db: Db,
  ownerId: string,
  workflowId: string,
  hookId: string,
  set: Partial<Pick<HookDoc, 'enabled' | 'name' | 'secret'>>,
): Promise<HookDoc | null> {
  return hooksCollection(db).findOneAndUpdate(
    { _id: hookId, owner_id: ownerId, workflow_id: workflowId },
    { $set: { ...set, updated_at: new Date() } },
    { returnDocument: 'after' },
  );
}

export async function deleteOwnHook(db: Db, ownerId: string, workflowId: string, hookId: string): Promise<boolean> {
  const res = await hooksCollection(db).deleteOne({ _id: hookId, owner_id: ownerId, workflow_id: workflowId });
  return res.deletedCount === 1;
}

/** A deleted workflow's hooks stop answering (they stay listed nowhere: their workflow is gone). */
export async function disableWorkflowHooks(db: Db, ownerId: string, workflowId: string): Promise<void> {
  await hooksCollection(db).updateMany(
    { owner_id: ownerId, workflow_id: workflowId },
    { $set: { enabled: false, updated_at: new Date() } },
  );
}
