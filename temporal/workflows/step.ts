/**
 * One execution of one step (a plain step, a map item or a loop iteration — `execId` says which): renders its
 * fields and performs it by kind. Every side effect is an activity keyed by the execution id, so two items of one map
 * never share an idempotency key, a Message-ID, a transcript or a blob.
 */
import { proxyActivities } from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import type { Activities } from '../activities';
import type { JsonValue } from '../../domain/json';
import { render, type RenderContext } from '../../domain/render';
import type { StepSnapshot } from '../../domain/run';
import type { AgentStepContext } from '../../domain/agent';
import { runAgentStep } from './agent-step';
import { performApproval, performDelay } from './builtin-steps';
import type { RunEnv, StepResult } from './run-env';
import { runSubWorkflow } from './sub-workflow';
import { runThreadStep } from './thread-step';

export async function runOnce(
  step: StepSnapshot,
  execId: string,
  ctx: RenderContext,
  env: RunEnv,
): Promise<StepResult> {
  switch (step.kind) {
    case 'agent': {
      const input = render(step.input, ctx);
      await env.project(execId, { kind: 'running', input });
      const agentCtx: AgentStepContext = {
        runId: env.runId,
        stepId: execId,
        ownerId: env.snapshot.owner_id,
        spend: env.spend,
        onCall: (used) => env.tally(execId, used),
        ...(env.shared ? { shared: env.shared } : {}),
        awaitDecision: (announce) => env.approvals.awaitDecision(execId, announce),
      };
      // A step that names a thread takes a turn in it (./thread-step.ts, decision 0603).
      const done =
        step.in_thread !== undefined
          ? await runThreadStep(step, render(step.in_thread, ctx), input, agentCtx)
          : await runAgentStep(step, input, agentCtx);
      await env.project(execId, { kind: 'completed', output: done.output, usage: done.usage, turns: done.turns });
      return { output: done.output, usage: done.usage };
    }
    case 'workflow':
      return runSubWorkflow(step, execId, ctx, env);
    case 'action': {
      // delay and approval are the workflow's own (./builtin-steps.ts). Every other action type is performed by the
      // worker (domain/actions/declarations.ts): an activity, or a local one when its declaration says it is pure
      // (stamped into the snapshot when the run starts).
      if (step.action_type === 'delay') {
        return { output: await performDelay(step, execId, render(step.config, ctx), env) };
      }
      if (step.action_type === 'approval') {
        return { output: await performApproval(step, execId, render(step.config, ctx), env) };
      }
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
      // A pure step needs no task queue round trip: a local activity (temporal/activities/pure-step.ts says why).
      const result =
        step.pure === true
          ? await uncancelledLocalActivities({
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
      // Only when the activity's own completion write failed: a step that completed during a database outage must not
      // lose its output.
      if (result.projected === false) await env.project(execId, { kind: 'completed', output: result.output });
      return { output: result.output };
    }
  }
}
