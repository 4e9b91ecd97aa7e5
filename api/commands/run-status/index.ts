// Endpoint 8: the read path (read.ts), its long poll and its read-repair against Temporal. Output resolution lives
// with the run view (db/run-view), which the worker shares for webhook bodies.
export { getRunStatus, type RunStatusDeps, type RunView } from './read';
export { resolveOutputs, type ResolvedOutput } from '../../../db/run-view/outputs';
