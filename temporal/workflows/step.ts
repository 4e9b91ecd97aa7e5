/**
 * One execution of one step (a plain step, a map item or a loop iteration — `execId` says which): renders its
 * fields and performs it by kind. Every side effect is an activity keyed by the execution id, so two items of one map
 * never share an idempotency key, a Message-ID, a transcript or a blob.
 */
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { JsonValue } from '../contract/json';
import { render, type RenderContext } from '../contract/render';
import type { ActionStepSnapshot, StepSnapshot } from '../contract/run';
import type { PureLineResult, RunOutcome } from '../contract/steps';
import { runAgentStep } from './agent-step';
import { budgetAllowsCall } from './budget';
import { performApproval, performDelay } from './builtin-steps';
import type { RunEnv, StepResult } from './run-env';
import { runSubWorkflow } from './sub-workflow';

/** The patch id of running `transform` steps as local activities (temporal/activities/pure-step.ts). */
export const PURE_STEPS_LOCAL = 'pure-steps-local';
/** The patch id of running a line of `transform` steps in one local activity (./graph.ts, pureLine). */
export const PURE_LINES = 'pure-lines';
/** The patch id of the model call activity recording an agent step's start and completion (CallModelInput.project). */
export const AGENT_PROJECTIONS = 'agent-projections';

/**
 * A line of pure steps (./graph.ts says which) in one local activity; returns the results of the steps that
 * completed, a prefix of the line, each recorded by the activity (or here, when its write failed). With `outcome`
 * (the line is all that is left of the run) the activity records the run's end too once every step completed.
 */
export async function runPureLine(
  steps: ActionStepSnapshot[],
  ctx: RenderContext,
  env: RunEnv,
  outcome?: RunOutcome,
): Promise<PureLineResult> {
  const result = await proxyLocalActivities<Activities>({
    summary: `transform ${steps.map((s) => s.id).join(', ')}`,
    // Each step's own timeout bounds its evaluation; the line gets their sum.
    startToCloseTimeout: `${steps.reduce((sum, s) => sum + s.timeout_seconds, 0)} seconds`,
    // Only a lost worker or a timeout fails the activity itself (a step that fails ends the line instead).
    retry: { maximumAttempts: 3, initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  }).runPureLine({
    run_id: env.runId,
    steps: steps.map((s) => ({ step_id: s.id, action_type: 'transform', config: s.config, input: s.input })),
    ctx,
    ...(outcome ? { outcome } : {}),
  });
  for (const [i, step] of result.completed.entries()) {
    if (step.projected === false) await env.project(steps[i]!.id, { kind: 'completed', output: step.output });
  }
  return result;
}

/** `outcome`: the run's outcome should this step complete, when nothing else is left to run (agent steps record it). */
export async function runOnce(
  step: StepSnapshot,
  execId: string,
  ctx: RenderContext,
  env: RunEnv,
  outcome?: RunOutcome,
): Promise<StepResult> {
  switch (step.kind) {
    case 'agent': {
      const input = render(step.input, ctx);
      // The model call activity records the step's start (with its input) and its completion: two local activities
      // fewer per step. A step whose first call the budget refuses never reaches it, so it is recorded here as before.
      const inActivity = patched(AGENT_PROJECTIONS) && budgetAllowsCall(env.spend);
      if (!inActivity) await env.project(execId, { kind: 'running', input });
      const done = await runAgentStep(step, input, {
        runId: env.runId,
        stepId: execId,
        ownerId: env.snapshot.owner_id,
        spend: env.spend,
        onCall: (used) => env.tally(execId, used),
        ...(env.shared ? { shared: env.shared } : {}),
        ...(inActivity ? { projectInActivity: true, ...(outcome ? { outcome } : {}) } : {}),
      });
      if (!done.projected) {
        await env.project(execId, { kind: 'completed', output: done.output, usage: done.usage, turns: done.turns });
      }
      return { output: done.output, usage: done.usage, ...(done.ended ? { ended: true } : {}) };
    }
    case 'workflow':
      return runSubWorkflow(step, execId, ctx, env);
    case 'action':
      switch (step.action_type) {
        case 'delay':
          return { output: await performDelay(step, execId, render(step.config, ctx), env) };
        case 'approval':
          return { output: await performApproval(step, execId, render(step.config, ctx), env) };
        case 'send_email':
        case 'http_request':
        case 'transform': {
          const config = render(step.config, ctx);
          const input = render(step.input, ctx);
          const retry = {
            maximumAttempts: step.retry.max_attempts,
            initialInterval: '500 ms',
            backoffCoefficient: 2,
            maximumInterval: '30 seconds',
          };
          // What the Temporal Web UI shows for the activity: which action, for which execution.
          const summary = `${step.action_type} ${execId}`;
          const request = {
            run_id: env.runId,
            step_id: execId,
            action_type: step.action_type,
            config: config as Record<string, JsonValue>,
            input,
            max_attempts: step.retry.max_attempts,
          };
          // A pure step needs no task queue round trip: a local activity (temporal/activities/pure-step.ts says why). Runs recorded
          // before this change scheduled a regular activity, and replay the same way.
          const result =
            step.action_type === 'transform' && patched(PURE_STEPS_LOCAL)
              ? await proxyLocalActivities<Activities>({
                  summary,
                  startToCloseTimeout: `${step.timeout_seconds} seconds`,
                  retry,
                }).runPureStep(request)
              : await proxyActivities<Activities>({
                  summary,
                  startToCloseTimeout: `${step.timeout_seconds} seconds`,
                  // Heartbeats carry cancellation to the running activity and notice a dead worker before the timeout.
                  heartbeatTimeout: `${Math.min(step.timeout_seconds, 10)} seconds`,
                  retry,
                }).runActionStep(request);
          // Only when the activity's own completion write failed (older histories never carry the flag, so they
          // replay unchanged): a step that completed during a database outage must not lose its output.
          if (result.projected === false) await env.project(execId, { kind: 'completed', output: result.output });
          return { output: result.output };
        }
      }
  }
}
