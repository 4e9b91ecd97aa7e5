// The run view (status body, run lists, webhook bodies): ./run-view, which the worker's webhook activity uses too.
export * from '../../shared/run-view/view';
export { webhookDeliveryView, type WebhookDeliveryView } from '../../shared/run-view/webhooks';
