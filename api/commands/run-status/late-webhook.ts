/**
 * The completion webhook of a run whose end the workflow never saw: it timed out (Temporal closes the execution
 * without running workflow code again) or was terminated. Read-repair records that end; this starts the same
 * `deliverWebhook` workflow the run workflow would have started, with the same id, so a second start (a retried read,
 * or a delivery the workflow did start) is refused by Temporal and changes nothing.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { runsCollection } from '../../../db/runs';
import type { RunStatus } from '../../../temporal/contract/run';
import {
  DELIVER_WEBHOOK_WORKFLOW_TYPE,
  webhookDeliveryId,
  type WebhookRequest,
} from '../../../temporal/contract/webhook';
import type { RunStatusDeps, RunView } from './read';

const START_DEADLINE_MS = 2_000;

export async function startLateWebhook(deps: RunStatusDeps, run: RunView, status: RunStatus): Promise<void> {
  const doc = await runsCollection(deps.db).findOne(
    { _id: run._id },
    { projection: { 'snapshot.callback_url': 1, 'snapshot.parent': 1 } },
  );
  const url = doc?.snapshot.callback_url;
  if (!url || doc.snapshot.parent) return;
  const request: WebhookRequest = { run_id: run._id, owner_id: run.owner_id, url, status };
  try {
    await deps.temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      deps.temporal.workflow.start(DELIVER_WEBHOOK_WORKFLOW_TYPE, {
        workflowId: webhookDeliveryId(run._id),
        taskQueue: run.temporal.task_queue,
        args: [request],
        staticSummary: `webhook of ${run._id} (${status})`,
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}
