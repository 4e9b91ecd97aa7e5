/**
 * Completion webhook deliveries (`webhook_deliveries`): one document per delivery, keyed by its delivery id (the
 * `webhook-id` header, the same on every attempt), with every attempt the worker made. Written only by the worker's
 * webhook activities; the status endpoint reads it. The body is built once, when the delivery is created, so every
 * attempt sends the same bytes.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookAttempt {
  /** 1-based, as Temporal counts the activity's attempts. */
  attempt: number;
  at: Date;
  /** The receiver's HTTP status; null when no response arrived (refused URL, timeout, connection error). */
  status_code: number | null;
  error: { reason: string; message: string } | null;
}

export interface WebhookDeliveryDoc {
  /** The delivery id (domain/webhook.ts: `webhook-<run id>`). */
  _id: string;
  run_id: string;
  owner_id: string;
  url: string;
  /** The run status the webhook announces (`type: run.<status>`). */
  event: string;
  /** The JSON body sent on every attempt; null until it has been built. */
  body: string | null;
  status: WebhookDeliveryStatus;
  attempts: WebhookAttempt[];
  created_at: Date;
  updated_at: Date;
}

export function webhookDeliveriesCollection(db: Db) {
  return db.collection<WebhookDeliveryDoc>('webhook_deliveries');
}

/** Creates the delivery (pending, no body yet) unless it exists; returns the stored document either way. */
export async function ensureDelivery(
  db: Db,
  init: Pick<WebhookDeliveryDoc, '_id' | 'run_id' | 'owner_id' | 'url' | 'event'>,
): Promise<WebhookDeliveryDoc> {
  const now = new Date();
  const doc: WebhookDeliveryDoc = {
    ...init,
    body: null,
    status: 'pending',
    attempts: [],
    created_at: now,
    updated_at: now,
  };
  try {
    await webhookDeliveriesCollection(db).insertOne(doc);
    return doc;
  } catch (err) {
    // A retried activity: the first try created it.
    if (!isDuplicateKey(err)) throw err;
    const found = await webhookDeliveriesCollection(db).findOne({ _id: init._id });
    if (!found) throw err;
    return found;
  }
}

export async function setDeliveryBody(db: Db, id: string, body: string): Promise<void> {
  // Only the first body counts: a retried build must not change what earlier attempts may already have sent.
  await webhookDeliveriesCollection(db).updateOne({ _id: id, body: null }, { $set: { body, updated_at: new Date() } });
}

export async function findDelivery(db: Db, id: string): Promise<WebhookDeliveryDoc | null> {
  return webhookDeliveriesCollection(db).findOne({ _id: id });
}

/**
 * Records one attempt (once per attempt number: a retried write does not add it twice) and, for a final one, the
 * delivery's status.
 */
export async function recordAttempt(
  db: Db,
  id: string,
  attempt: WebhookAttempt,
  status?: Exclude<WebhookDeliveryStatus, 'pending'>,
): Promise<void> {
  const now = new Date();
  await webhookDeliveriesCollection(db).updateOne(
    { _id: id, 'attempts.attempt': { $ne: attempt.attempt } },
    { $push: { attempts: attempt }, $set: { updated_at: now } },
  );
  if (status) await setDeliveryStatus(db, id, status);
}

/** A delivered webhook stays delivered; a failure is recorded only while the delivery is still pending. */
export async function setDeliveryStatus(
  db: Db,
  id: string,
  status: Exclude<WebhookDeliveryStatus, 'pending'>,
): Promise<void> {
  await webhookDeliveriesCollection(db).updateOne(
    { _id: id, status: 'pending' },
    { $set: { status, updated_at: new Date() } },
  );
}

/** The deliveries of a run, oldest first (at most one today: one per run end). */
export async function findRunDeliveries(db: Db, runId: string): Promise<WebhookDeliveryDoc[]> {
  return webhookDeliveriesCollection(db).find({ run_id: runId }).sort({ created_at: 1, _id: 1 }).toArray();
}
