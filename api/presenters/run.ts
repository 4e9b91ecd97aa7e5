// The run view is built under db/run-view so that the worker (webhook bodies) shares it; the API presents it from here.
export * from '../../db/run-view/view';
export { webhookDeliveryView, type WebhookDeliveryView } from '../../db/run-view/webhooks';
