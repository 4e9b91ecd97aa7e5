/**
 * Execution ids: the stable identity of one execution of a step, minted by the run workflow and used by everything
 * keyed by a step (outputs, blobs, transcripts, the status projection, approvals, idempotency keys).
 *
 * - a plain step: its step id (`notify`) — the same as before graphs, so older runs keep their keys;
 * - item `i` (0-based) of a map step: `emails[3]`;
 * - iteration `n` (1-based) of a loop step: `draft#2`.
 *
 * Map and loop cannot be combined on one step, and a group of steps is a sub-workflow (a child run of its own), so
 * an execution id never nests.
 */

export type ExecutionId = string;

export type ParsedExecutionId =
  | { kind: 'step'; stepId: string }
  | { kind: 'item'; stepId: string; index: number }
  | { kind: 'iteration'; stepId: string; iteration: number };

/** The pattern of an execution id (step ids are slugs: see api/schemas/workflows.ts). */
export const EXECUTION_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}(?:\[\d{1,6}\]|#\d{1,6})?$/;

export function itemExecutionId(stepId: string, index: number): ExecutionId {
  return `${stepId}[${index}]`;
}

export function iterationExecutionId(stepId: string, iteration: number): ExecutionId {
  return `${stepId}#${iteration}`;
}

export function parseExecutionId(id: string): ParsedExecutionId | null {
  const m = /^([a-z][a-z0-9_-]{0,63})(?:\[(\d{1,6})\]|#(\d{1,6}))?$/.exec(id);
  if (!m) return null;
  const stepId = m[1] as string;
  if (m[2] !== undefined) return { kind: 'item', stepId, index: Number(m[2]) };
  if (m[3] !== undefined) return { kind: 'iteration', stepId, iteration: Number(m[3]) };
  return { kind: 'step', stepId };
}

/**
 * The run id of a sub-workflow execution: the parent's run id, a dot, and the execution in URL-safe characters
 * (`run_x.research`, `run_x.per_customer~3`, `run_x.draft~i2`). The prefix is what lets the parent read its child's
 * large outputs (db/blobs.ts) and what makes a child's id unguessable without its parent's.
 */
export function childRunId(parentRunId: string, execId: ExecutionId): string {
  const parsed = parseExecutionId(execId);
  if (!parsed) throw new Error(`invalid execution id ${execId}`);
  switch (parsed.kind) {
    case 'step':
      return `${parentRunId}.${parsed.stepId}`;
    case 'item':
      return `${parentRunId}.${parsed.stepId}~${parsed.index}`;
    case 'iteration':
      return `${parentRunId}.${parsed.stepId}~i${parsed.iteration}`;
  }
}

/** True when `runId` is `ancestorRunId` or one of its (transitive) child runs. */
export function isSameOrChildRun(runId: string, ancestorRunId: string): boolean {
  return runId === ancestorRunId || runId.startsWith(`${ancestorRunId}.`);
}
