/**
 * The Temporal start of a recorded run (workflow id = run id), the last part of a run start (api/commands/start-run.ts, and a thread turn started by the worker). The API
 * answers 202 only once this has returned: Temporal has the run then, so every acknowledged run runs, and an
 * unreachable Temporal is the start's 503 rather than a run that waits for someone to start it.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { recordTemporalRunId, type RunDoc } from '../../db/runs';
import type { RunSnapshot } from '../../domain/run';
import { ownerIdKey, workflowIdKey, workflowNameKey } from '../../domain/search-attributes';
import { RUN_WORKFLOW_TYPE } from '../../domain/task-queue';

/** How long Temporal gets to accept a start before it counts as unreachable (the request's 503). */
export const START_DEADLINE_MS = 5_000;

/** How long after the run's deadline Temporal closes an execution whose workflow never got to end it itself. */
const DEADLINE_BACKSTOP_MS = 60_000;

/**
 * Starts the execution, idempotent by workflow id (a second start of the same run, as a retried idempotent request
 * makes, finds the first), then records Temporal's run id on the run.
 */
export async function startExecution(deps: { db: Db; temporal: Client }, doc: RunDoc, snapshot: RunSnapshot) {
  const temporalRunId = await startOrFind(deps.temporal, doc, snapshot);
  // Temporal has the run, and the workflow writes its progress whether or not this lands: a failed write does not fail
  // the start. What reads it (a replayed idempotent request, the reconciler, a status read of a run Temporal no longer
  // knows) only tells "started" from "never started".
  await recordTemporalRunId(deps.db, doc._id, temporalRunId).catch(() => undefined);
}

async function startOrFind(client: Client, doc: RunDoc, snapshot: RunSnapshot): Promise<string> {
  try {
    const handle = await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
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
    return handle.firstExecutionRunId;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const described = await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      client.workflow.getHandle(doc._id).describe(),
    );
    return described.runId;
  }
}

/** What is left of the run's time limit when its execution starts (at least a second: Temporal then times it out). */
function remainingMs(deadline: Date): number {
  return Math.max(1_000, deadline.getTime() - Date.now());
}
