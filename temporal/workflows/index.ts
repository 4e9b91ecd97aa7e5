// The workflow bundle's entry: every workflow type the worker registers.
export { runWorkflow } from './run';
export { deliverWebhook } from './webhook';
export { scheduledRunWorkflow } from './scheduled-run';
export { experimentWorkflow, experimentItemWorkflow } from './experiment';
