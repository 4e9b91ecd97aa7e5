/**
 * The Temporal start of a recorded run (workflow id = run id), whoever makes it: the API, or a worker the API handed
 * the start to (temporal/run-starts.ts), which asks Temporal to give the first workflow task straight back to it.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { RunDoc } from '../../db/runs';
import type { RunSnapshot } from '../../temporal/contract/run';
import { ownerIdKey, workflowIdKey, workflowNameKey } from '../../temporal/contract/search-attributes';
import { RUN_WORKFLOW_TYPE } from '../../temporal/contract/task-queue';

/** How long Temporal gets to accept a start before it counts as unreachable. */
export const START_DEADLINE_MS = 5_000;

export interface StartedExecution {
  /** Temporal's run id of the execution (the one already there when the run had been started before). */
  temporalRunId: string;
  /** Temporal handed the first workflow task back in its answer (only ever with `eager`). */
  eagerlyStarted: boolean;
}

/**
 * Starts the execution, idempotent by workflow id: a second start of the same run finds the first. `eager` asks for
 * eager workflow start, which only a client sharing its connection with a worker of the run's task queue can make.
 */
export async function startRunExecution(
  client: Client,
  doc: RunDoc,
  snapshot: RunSnapshot,
  opts: { eager?: boolean } = {},
): Promise<StartedExecution> {
  try {
    const handle = await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      client.workflow.start(RUN_WORKFLOW_TYPE, {
        workflowId: doc._id,
        taskQueue: doc.temporal.task_queue,
        args: [snapshot],
        ...(doc.deadline_at ? { workflowExecutionTimeout: remainingMs(doc.deadline_at) } : {}),
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
        ...(opts.eager ? { requestEagerStart: true } : {}),
      }),
    );
    return { temporalRunId: handle.firstExecutionRunId, eagerlyStarted: handle.eagerlyStarted };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const described = await client.workflow.getHandle(doc._id).describe();
    return { temporalRunId: described.runId, eagerlyStarted: false };
  }
}

/** What is left of the run's time limit when its execution starts (at least a second: Temporal then times it out). */
function remainingMs(deadline: Date): number {
  return Math.max(1_000, deadline.getTime() - Date.now());
}
