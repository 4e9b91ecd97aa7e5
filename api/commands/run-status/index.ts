// Endpoint 8: the read path (read.ts) and its long poll; reads only. Output resolution is a storage read
// (db/run-view), shared with the worker's webhook bodies.
export { getRunStatus, type RunStatusDeps } from './read';
export type { RunView } from './types';
export { resolveOutputs, type ResolvedOutput } from '../../../db/run-view/outputs';
