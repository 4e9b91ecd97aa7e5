/**
 * The hand-written service's workflow: the run's steps as regular activities one after another (the same requests as
 * B2's Stepwise workflow), then its outcome written to the run record with one local activity.
 */
import { ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ChatTurn, HandWrittenActivities } from './activities';

const options = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } };
const { request, reply } = proxyActivities<HandWrittenActivities>(options);
const { recordOutcome } = proxyLocalActivities<HandWrittenActivities>(options);

export interface HandWrittenRun {
  runId: string;
  urls: string[];
  input: unknown;
}

export async function handWrittenWorkflow(run: HandWrittenRun): Promise<unknown> {
  let value: unknown = run.input;
  try {
    for (let i = 0; i < run.urls.length; i++) value = await request(run.urls[i]!, `${run.runId}:s${i + 1}`);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    await recordOutcome(run.runId, { error });
    throw ApplicationFailure.nonRetryable(error);
  }
  await recordOutcome(run.runId, { output: value });
  return value;
}

/** T1's reference: a chat turn, its reply as one activity. */
export async function handWrittenChatTurn(turn: ChatTurn): Promise<void> {
  await reply(turn);
}
