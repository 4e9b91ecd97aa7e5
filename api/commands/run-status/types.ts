/** The status read's view of a run (a file of its own: the read and its long poll both use it, no cycle). */
import type { RunDoc, RunLiveness } from '../../../db/runs';

/**
 * The run as the status read answers it: the stored projection, or what it derives from the projection and Temporal
 * without writing it. `liveness` is never stored: a read that asked Temporal fills it in.
 */
export type RunView = Omit<RunDoc, 'snapshot'> & { liveness?: RunLiveness | undefined };
