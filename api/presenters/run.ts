// The run view (status body, run lists, webhook bodies): ./run-view, which the worker's webhook activity uses too.
export * from './run-view/view';
export { webhookDeliveryView, type WebhookDeliveryView } from './run-view/webhooks';
