/**
 * The activities of a completion webhook delivery (temporal/workflows/webhook.ts): build and store the body once,
 * POST it signed (one activity attempt = one POST, recorded in `webhook_deliveries`), and record a final failure.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { buildRunView } from '../../shared/run-view/build';
import { findRun } from '../../db/runs';
import {
  ensureDelivery,
  findDelivery,
  recordAttempt,
  setDeliveryBody,
  setDeliveryStatus,
  type WebhookAttempt,
} from '../../db/webhook-deliveries';
import { ensureWebhookSecret } from '../../db/webhook-secrets';
import {
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  webhookDeliveryId,
  type WebhookPlan,
  type WebhookRequest,
} from '../../domain/webhook';
import { classify, parseRetryAfter } from '../failures';
import { guardedFetch, type Resolver } from '../net/guarded-fetch';
import { signWebhook } from '../../shared/webhook-signature';

export interface WebhookDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** Tests may simulate DNS answers; the system resolver otherwise. */
  resolver?: Resolver;
}

/**
 * Above this the body leaves large step outputs by reference (`{stored_by_reference, bytes}`) instead of inlining
 * them: receivers should not have to accept megabytes, and the body is stored in one MongoDB document.
 */
export const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;
/** The receiver's answer is not used; reading a little of it is enough to finish the exchange. */
const RESPONSE_MAX_BYTES = 4 * 1024;

/** A redirect is not followed (a webhook's target is the configured URL); it counts as a failed attempt. */
class RedirectNotFollowed extends Error {}

export function createWebhookActivities(deps: WebhookDeps) {
  return {
    async prepareWebhook(req: WebhookRequest): Promise<WebhookPlan> {
      const deliveryId = webhookDeliveryId(req.run_id);
      const delivery = await ensureDelivery(deps.db, {
        _id: deliveryId,
        run_id: req.run_id,
        owner_id: req.owner_id,
        url: req.url,
        event: `run.${req.status}`,
      });
      if (delivery.body === null) {
        const run = await findRun(deps.db, req.owner_id, req.run_id);
        if (!run) throw ApplicationFailure.nonRetryable(`run ${req.run_id} not found`, 'run_not_found');
        // Built after the delivery exists, so the body's `webhooks` shows this delivery (pending, no attempts yet).
        let data = await buildRunView(deps.db, run, deps.config);
        let body = JSON.stringify({ type: delivery.event, timestamp: delivery.created_at.toISOString(), data });
        if (Buffer.byteLength(body) > WEBHOOK_BODY_LIMIT_BYTES) {
          data = await buildRunView(deps.db, run, deps.config, { resolveLarge: false });
          body = JSON.stringify({ type: delivery.event, timestamp: delivery.created_at.toISOString(), data });
        }
        await setDeliveryBody(deps.db, deliveryId, body);
      }
      return {
        delivery_id: deliveryId,
        initial_interval_seconds: deps.config.WEBHOOK_RETRY_INITIAL_SECONDS,
        max_attempts: deps.config.WEBHOOK_MAX_ATTEMPTS,
      };
    },

    async postWebhook({ delivery_id }: { delivery_id: string }): Promise<{ status_code: number }> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const log = deps.logger.child({ delivery_id, attempt });
      const delivery = await findDelivery(deps.db, delivery_id);
      if (!delivery || delivery.body === null) {
        throw ApplicationFailure.nonRetryable(`webhook delivery ${delivery_id} has no body`, 'internal');
      }
      // Delivered by an earlier attempt whose completion Temporal did not hear of (a worker crash): done.
      if (delivery.status === 'delivered') return { status_code: 200 };
      const secret = await ensureWebhookSecret(deps.db, delivery.owner_id);
      if (!secret) throw ApplicationFailure.nonRetryable(`user ${delivery.owner_id} not found`, 'internal');
      const timestamp = Math.floor(Date.now() / 1000);
      const record = (a: Omit<WebhookAttempt, 'attempt' | 'at'>, status?: 'delivered' | 'failed') =>
        recordAttempt(deps.db, delivery_id, { attempt, at: new Date(), ...a }, status);
      let failure: ApplicationFailure;
      try {
        const res = await guardedFetch({
          method: 'POST',
          url: delivery.url,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Stepwise-Webhooks/1',
            'webhook-id': delivery_id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhook(secret.secret, delivery_id, timestamp, delivery.body),
          },
          body: delivery.body,
          timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
          maxBytes: RESPONSE_MAX_BYTES,
          allowedHosts: deps.config.HTTP_ALLOWED_HOSTS,
          signal: ctx.cancellationSignal,
          ...(deps.resolver ? { resolver: deps.resolver } : {}),
          checkHop: (url, hop) => {
            if (hop > 0)
              throw new RedirectNotFollowed(`the receiver redirected to ${url.origin}; redirects are not followed`);
          },
        });
        if (res.status >= 200 && res.status < 300) {
          await record({ status_code: res.status, error: null }, 'delivered');
          return { status_code: res.status };
        }
        // Every other answer is retried, 4xx included: a receiver that is misconfigured now may be fixed later.
        const message = `the receiver answered HTTP ${res.status}`;
        await record({ status_code: res.status, error: { reason: 'http_status', message } });
        failure = ApplicationFailure.create({
          message,
          type: 'http_status',
          details: [{ status: res.status }],
          nextRetryDelay: parseRetryAfter(res.headers['retry-after']),
        });
      } catch (err) {
        if (err instanceof RedirectNotFollowed) {
          await record({ status_code: null, error: { reason: 'redirect', message: err.message } });
          failure = ApplicationFailure.create({ message: err.message, type: 'redirect' });
        } else {
          // The SSRF guard's refusal (`url_refused`) cannot change by retrying; network errors and timeouts can.
          const c = classify(err);
          await record({ status_code: null, error: { reason: c.code, message: c.message } });
          failure = ApplicationFailure.create({ message: c.message, type: c.code, nonRetryable: !c.retryable });
        }
      }
      log.info({ type: failure.type }, 'webhook attempt failed');
      throw failure;
    },

    async failWebhook({ delivery_id }: { delivery_id: string }): Promise<void> {
      await setDeliveryStatus(deps.db, delivery_id, 'failed');
    },
  };
}
