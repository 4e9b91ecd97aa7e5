// The workflow bundle's entry: every workflow type the worker registers.
export { pingWorkflow } from './ping';
export { runWorkflow } from './run';
