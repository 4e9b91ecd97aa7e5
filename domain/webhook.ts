/**
 * The completion-webhook contract between the run workflow, the `deliverWebhook` child workflow and its activities.
 * Workflow-safe: types and pure functions only. Payloads stay small: the body is built and kept in MongoDB
 * (`webhook_deliveries`), never carried through Temporal.
 */
import type { RunStatus } from './run';

export const DELIVER_WEBHOOK_WORKFLOW_TYPE = 'deliverWebhook';

/**
 * The delivery workflow's id and the delivery id (`webhook-id` header): one delivery per run end, so it is derived
 * from the run id — a retried or replayed start finds the same workflow, and the receiver sees the same id on
 * every attempt.
 */
export function webhookDeliveryId(runId: string): string {
  return `webhook-${runId}`;
}

export interface WebhookRequest {
  run_id: string;
  owner_id: string;
  url: string;
  /** The terminal status the run workflow recorded (the body's `type` is `run.<status>`). */
  status: RunStatus;
}

/** What preparing a delivery gives back: its id and the worker's retry settings (config.ts WEBHOOK_*). */
export interface WebhookPlan {
  delivery_id: string;
  initial_interval_seconds: number;
  max_attempts: number;
}

export interface WebhookOutcome {
  delivery_id: string;
  status: 'delivered' | 'failed';
}

/** Longest exchange of one attempt (connect, send, answer); the activity's own timeout leaves room around it. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** Retry intervals grow by this factor up to this bound. */
export const WEBHOOK_BACKOFF = 2;
export const WEBHOOK_MAX_INTERVAL = '10 minutes';
