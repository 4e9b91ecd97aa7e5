// Endpoint 8: the read path (read.ts) and its long poll; reads only. Output resolution lives with the run view
// (db/run-view), which the worker shares for webhook bodies.
export { getRunStatus, type RunStatusDeps } from './read';
export type { RunView } from './types';
export { resolveOutputs, type ResolvedOutput } from '../../../db/run-view/outputs';
