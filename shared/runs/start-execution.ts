/**
 * The Temporal start of a recorded run (workflow id = run id), the last part of a run start (api/commands/start-run.ts, and a thread turn started by the worker). The API
 * answers 202 only once this has returned: Temporal has the run then, so every acknowledged run runs, and an
 * unreachable Temporal is the start's 503 rather than a run that waits for someone to start it.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { RunDoc } from '../../db/runs';
import type { RunSnapshot } from '../../domain/run';
import { ownerIdKey, workflowIdKey, workflowNameKey } from '../../domain/search-attributes';
import { RUN_WORKFLOW_TYPE } from '../../domain/task-queue';

/** How long Temporal gets to accept a start before it counts as unreachable (the request's 503). */
export const START_DEADLINE_MS = 5_000;

/** How long after the run's deadline Temporal closes an execution whose workflow never got to end it itself. */
const DEADLINE_BACKSTOP_MS = 60_000;

/**
 * Starts the execution, idempotent by workflow id: a second start of the same run (a retried idempotent request, a
 * repeated attempt) finds the first and does nothing. Temporal's run id is not written here: the worker's first write
 * of the run records it (db/runs.ts), so the answer waits for no database write after the start.
 */
export async function startExecution(deps: { temporal: Client }, doc: RunDoc, snapshot: RunSnapshot): Promise<void> {
  const client = deps.temporal;
  try {
    await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      client.workflow.start(RUN_WORKFLOW_TYPE, {
        workflowId: doc._id,
        taskQueue: doc.temporal.task_queue,
        // The run's deadline is the workflow's own timer (temporal/workflows/deadline.ts); Temporal's execution
        // timeout is only the backstop for a run whose code never runs (no worker for the whole grace period).
        args: [doc.deadline_at ? { ...snapshot, deadline_at: doc.deadline_at.toISOString() } : snapshot],
        ...(doc.deadline_at ? { workflowExecutionTimeout: remainingMs(doc.deadline_at) + DEADLINE_BACKSTOP_MS } : {}),
        memo: { stepwise_workflow_id: doc.workflow_id, workflow_name: doc.workflow_name, owner_id: doc.owner_id },
        // The Web UI lists every execution as `runWorkflow`; the summary says which workflow it runs. It renders both
        // as markdown, where an id's underscores could turn into emphasis (`wf_ab_` → wf<em>ab</em>): ids are code.
        staticSummary: doc.workflow_name,
        staticDetails: `Stepwise workflow \`${doc.workflow_id}\`, run \`${doc._id}\``,
        typedSearchAttributes: [
          { key: workflowIdKey, value: doc.workflow_id },
          { key: ownerIdKey, value: doc.owner_id },
          { key: workflowNameKey, value: doc.workflow_name },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** What is left of the run's time limit when its execution starts (at least a second: Temporal then times it out). */
function remainingMs(deadline: Date): number {
  return Math.max(1_000, deadline.getTime() - Date.now());
}
