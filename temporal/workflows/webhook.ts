/**
 * Completion webhooks. After the run workflow has recorded its terminal outcome it starts `deliverWebhook` as a child
 * workflow (id `webhook-<run id>`, ParentClosePolicy ABANDON): the run closes at once and the delivery lives on with
 * its own retries, visible in the Web UI next to the run. One activity attempt is one POST; Temporal's retry policy
 * (config WEBHOOK_RETRY_INITIAL_SECONDS, backoff 2, at most 10 minutes apart, WEBHOOK_MAX_ATTEMPTS) is the backoff.
 */
import {
  ActivityFailure,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import type { Activities } from '../activities';
import type { RunSnapshot, RunStatus } from '../../domain/run';
import {
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_BACKOFF,
  WEBHOOK_MAX_INTERVAL,
  webhookDeliveryId,
  type WebhookOutcome,
  type WebhookRequest,
} from '../../domain/webhook';

/** Builds the body from the run's projection (blob reads for large outputs: a regular activity) and stores it. */
const { prepareWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 20, initialInterval: '1 second', maximumInterval: '1 minute' },
});

const { failWebhook } = uncancelledLocalActivities({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 20, initialInterval: '200 ms', maximumInterval: '10 seconds' },
});

export async function deliverWebhook(req: WebhookRequest): Promise<WebhookOutcome> {
  const plan = await prepareWebhook(req);
  // The retry settings come from the worker's configuration through the recorded result of prepareWebhook, so a
  // replay uses the values the delivery started with.
  const { postWebhook } = proxyActivities<Activities>({
    // The attempt's own exchange is bounded by WEBHOOK_ATTEMPT_TIMEOUT_MS; the rest covers the database writes.
    startToCloseTimeout: WEBHOOK_ATTEMPT_TIMEOUT_MS + 10_000,
    retry: {
      initialInterval: Math.round(plan.initial_interval_seconds * 1000),
      backoffCoefficient: WEBHOOK_BACKOFF,
      maximumInterval: WEBHOOK_MAX_INTERVAL,
      maximumAttempts: plan.max_attempts,
    },
  });
  try {
    await postWebhook({ delivery_id: plan.delivery_id });
    return { delivery_id: plan.delivery_id, status: 'delivered' };
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Attempts used up, or a refusal no retry can change (the URL resolves to a refused address).
    await failWebhook({ delivery_id: plan.delivery_id });
    const why = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
    log.warn('webhook delivery failed', { delivery_id: plan.delivery_id, error: why });
    return { delivery_id: plan.delivery_id, status: 'failed' };
  }
}

/**
 * Starts the run's webhook delivery, if it has a callback URL (sub-workflow runs never deliver). A run without one
 * issues no command here, so histories recorded before webhooks replay unchanged. Awaited until the child has
 * started: an abandoned child must be running before its parent closes.
 */
export async function startWebhookDelivery(snapshot: RunSnapshot, runId: string, status: RunStatus): Promise<void> {
  const url = snapshot.callback_url;
  if (!url || snapshot.parent) return;
  try {
    await startChild(deliverWebhook, {
      workflowId: webhookDeliveryId(runId),
      args: [{ run_id: runId, owner_id: snapshot.owner_id, url, status }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `webhook of ${runId} (${status})`,
    });
  } catch (err) {
    // A delivery of this run already exists (a reset replayed the end): that one delivers. Never fail the run for it.
    if (isCancellation(err)) throw err;
    log.warn('webhook delivery not started', {
      run_id: runId,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
