// Endpoint 8: the read path (read.ts), its long poll, its read-repair against Temporal, and output resolution.
export { getRunStatus, type RunStatusDeps, type RunView } from './read';
export { resolveOutputs, type ResolvedOutput } from './outputs';
