/**
 * The smallest real workflow: one activity round trip. The worker's readiness check and the foundation tests use it
 * to prove that a workflow runs on the server, through this worker, and returns.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { echo } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

export async function pingWorkflow(message: string): Promise<string> {
  return echo(message);
}
