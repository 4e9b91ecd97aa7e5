/**
 * A scheduled run: one Temporal execution per fire of a Temporal Schedule (workflow id = run id). Its first activity
 * builds the snapshot from the workflow as it is now and records the run document; then the execution continues as
 * the ordinary run workflow, inline, so the run has one execution and one status like any other. When the run cannot
 * start (workflow or template deleted, input no longer valid, too many runs in flight) the activity has already
 * recorded it as failed with the reason, and the execution fails with the same message.
 */
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunResult } from '../../domain/run';
import { SCHEDULED_RUN_REFUSED_FAILURE_TYPE, type ScheduledRunArgs } from '../../domain/schedule';
import { runWorkflow } from './run';

/** Two database reads and a write; retried while MongoDB is away (idempotent by run id). */
const { prepareScheduledRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 30, initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function scheduledRunWorkflow(args: ScheduledRunArgs): Promise<RunResult> {
  const info = workflowInfo();
  const verdict = await prepareScheduledRun({
    ...args,
    run_id: info.workflowId,
    temporal_run_id: info.runId,
    deadline_at: info.executionExpirationTime?.toISOString() ?? null,
  });
  if (!verdict.ok) {
    throw ApplicationFailure.nonRetryable(verdict.message, SCHEDULED_RUN_REFUSED_FAILURE_TYPE, {
      reason: verdict.reason,
    });
  }
  return runWorkflow(verdict.snapshot);
}
