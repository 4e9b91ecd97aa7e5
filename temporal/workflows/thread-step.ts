/**
 * A workflow's agent step that names a `thread` (decision 0603): it takes the thread's next turn with its rendered
 * input as the user message, answers as the thread's turns do (the thread's memory, summary and recent turns, its
 * compaction — ./agent-step.ts with the turn's `thread`), and ends the turn with its outcome, which copies the
 * exchange into the conversation. While another turn runs or messages wait, the step waits (a durable timer, backing
 * off to 30 s) and asks again, at most its `timeout_seconds`; then it fails with `thread_busy`. Taking and ending the
 * turn are not cancellable: a run cancelled meanwhile still ends the turn it took, as `cancelled`.
 */
import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AgentStepContext, AgentStepOutcome } from '../../domain/agent';
import type { JsonValue } from '../../domain/json';
import type { AgentStepSnapshot, Usage } from '../../domain/run';
import { runAgentStep } from './agent-step';
import { toRunError } from './run-errors';
import { addUsage } from './run-env';

/** ApplicationFailure type of a step that waited its whole timeout for the thread's running turn to end. */
export const THREAD_BUSY_FAILURE_TYPE = 'thread_busy';

const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;

export async function runThreadStep(
  step: AgentStepSnapshot,
  threadId: JsonValue,
  input: JsonValue,
  ctx: AgentStepContext,
): Promise<AgentStepOutcome> {
  if (typeof threadId !== 'string' || threadId.trim() === '') {
    const shown = JSON.stringify(threadId).slice(0, 200);
    throw ApplicationFailure.nonRetryable(`thread: rendered to ${shown}, not a thread id`, 'invalid_thread');
  }
  const { joinThread, leaveThread } = proxyActivities<Activities>({
    summary: `thread ${ctx.stepId}`,
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 10, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });
  const at = { run_id: ctx.runId, step_id: ctx.stepId, owner_id: ctx.ownerId };
  const deadline = Date.now() + step.timeout_seconds * 1000;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    const joined = await CancellationScope.nonCancellable(() => joinThread({ ...at, thread_id: threadId, input }));
    if (joined.kind === 'busy') {
      if (Date.now() + wait > deadline) {
        const running = joined.running ? `turn ${joined.running.turn} (run ${joined.running.run_id}) is running` : '';
        const queued = joined.queued > 0 ? `${joined.queued} messages wait` : '';
        throw ApplicationFailure.nonRetryable(
          `thread ${threadId} stayed busy for the step's ${step.timeout_seconds} s: ${[running, queued].filter(Boolean).join(', ')}`,
          THREAD_BUSY_FAILURE_TYPE,
        );
      }
      await sleep(wait);
      wait = Math.min(wait * 2, MAX_WAIT_MS);
      continue;
    }
    const thread = joined.thread;
    const usage: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
    const counted: AgentStepContext = {
      ...ctx,
      onCall: (used) => {
        addUsage(usage, used);
        ctx.onCall?.(used);
      },
    };
    const leave = (status: 'completed' | 'failed' | 'cancelled', err: unknown) =>
      CancellationScope.nonCancellable(() =>
        leaveThread({ ...at, thread, status, error: err === null ? null : toRunError(ctx.stepId, err), usage }),
      );
    let done: AgentStepOutcome;
    try {
      done = await runAgentStep({ ...step, thread }, input, counted);
    } catch (err) {
      await leave(isCancellation(err) ? 'cancelled' : 'failed', err);
      throw err;
    }
    await leave('completed', null);
    return done;
  }
}
