/**
 * The bare-Temporal reference arm: the same shapes as the Stepwise runs being measured (one trivial activity, or
 * three in sequence, as regular or as local activities; three HTTP requests in sequence; a fan-out of HTTP calls; model calls) with nothing of Stepwise
 * around them.
 */
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from './bare-activities';

const options = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } };
const { step, get, request, modelCall } = proxyActivities<typeof activities>(options);
const local = proxyLocalActivities<typeof activities>(options);

export async function bareWorkflow(steps: number, input: Record<string, unknown>): Promise<unknown> {
  let value: unknown = input;
  for (let i = 0; i < steps; i++) value = await step(value);
  return value;
}

/** B2/B3: `steps` HTTP requests to `url` one after another, as regular activities, keyed like Stepwise's. */
export async function bareHttpWorkflow(steps: number, url: string): Promise<unknown> {
  let value: unknown = null;
  for (let i = 0; i < steps; i++) value = await request(url, `${workflowInfo().workflowId}:s${i + 1}`);
  return value;
}

/** B4: the same trivial steps as local activities (what Stepwise does for pure steps). */
export async function bareLocalWorkflow(steps: number, input: Record<string, unknown>): Promise<unknown> {
  let value: unknown = input;
  for (let i = 0; i < steps; i++) value = await local.step(value);
  return value;
}

/** B10: `items` GETs of `url`, at most `concurrency` at a time, results in order. */
export async function bareFanOut(items: number, concurrency: number, url: string): Promise<unknown[]> {
  const results: unknown[] = new Array(items);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items) }, async () => {
      while (next < items) {
        const i = next++;
        results[i] = await get(url);
      }
    }),
  );
  return results;
}

/** B6's floor: the same model calls as regular activities, one after another, with nothing of Stepwise around them. */
export async function bareAgentWorkflow(
  calls: number,
  baseUrl: string,
  model: string,
  apiKey: string,
): Promise<string> {
  let text = '';
  for (let i = 0; i < calls; i++) text = await modelCall(baseUrl, model, apiKey);
  return text;
}
