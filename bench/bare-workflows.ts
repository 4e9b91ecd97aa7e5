/**
 * The bare-Temporal reference arm: the same shapes as the Stepwise runs being measured (one trivial activity, or
 * three in sequence) with nothing of Stepwise around them.
 */
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from './bare-activities';

const { step } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

export async function bareWorkflow(steps: number, input: Record<string, unknown>): Promise<unknown> {
  let value: unknown = input;
  for (let i = 0; i < steps; i++) value = await step(value);
  return value;
}
