/**
 * The run workflow: one execution per run (workflow id = run id), steps in order, one activity per side effect.
 * Its input is the immutable RunSnapshot the API built, never a database document. Action steps write their own
 * progress into the `runs` projection from inside their activity; steps the workflow performs itself (delay,
 * approval, agent completion) and the run's outcome are written through cheap local activities.
 *
 * Any change to the order or kind of commands this code issues must go behind `patched()`; the replay test over
 * test/temporal/histories/ fails otherwise.
 */
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunSpend } from '../contract/agent';
import type { JsonValue } from '../contract/json';
import { approveUpdate, progressQuery, type ApprovalDecision } from '../contract/messages';
import { render, type RenderContext } from '../contract/render';
import type {
  OutputRef,
  RunError,
  RunResult,
  RunSnapshot,
  RunStatus,
  StepSnapshot,
  StepStatus,
  Usage,
} from '../contract/run';
import { RUN_FAILED_FAILURE_TYPE, type RunOutcome, type StepEvent } from '../contract/steps';
import { runAgentStep } from './agent-step';
import { performApproval, performDelay, type ApprovalGate } from './builtin-steps';
import { toRunError } from './run-errors';

/** Projection writes: idempotent, retried briefly; a projection that stays behind is fixed by the API's read-repair. */
const projection = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 20, initialInterval: '200 ms', maximumInterval: '10 seconds' },
});

/** Above this the workflow result leaves outputs out (the API reads them from the projection anyway). */
const RESULT_OUTPUTS_LIMIT_BYTES = 128 * 1024;

export async function runWorkflow(snapshot: RunSnapshot): Promise<RunResult> {
  const outputs: Record<string, JsonValue | OutputRef> = {};
  const usage: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  const stepStatus: Record<string, StepStatus> = Object.fromEntries(snapshot.steps.map((s) => [s.id, 'pending']));
  let runStatus: RunStatus = 'running';
  let current: string | null = null;
  const gate: ApprovalGate = { waitingFor: null, decision: undefined };
  // Shared by every agent step: the run budget counts across steps, failed ones included.
  const spend: RunSpend = { budget: snapshot.budget, model_calls: 0, tokens: 0 };

  setHandler(progressQuery, () => ({ status: runStatus, current_step: current, steps: { ...stepStatus } }));
  setHandler(
    approveUpdate,
    (decision) => {
      gate.decision = decision;
      return { step_id: decision.step_id, approved: decision.approved };
    },
    {
      validator: (decision: ApprovalDecision) => {
        if (gate.waitingFor !== decision.step_id || gate.decision !== undefined) {
          throw ApplicationFailure.nonRetryable(
            `step "${decision.step_id}" is not waiting for approval`,
            'not_waiting',
          );
        }
      },
    },
  );

  const runId = workflowInfo().workflowId;
  // Projection writes are bookkeeping: when they keep failing (MongoDB down for long) the run goes on, and the API's
  // read-repair reconciles the projection with Temporal. A cancellation still propagates.
  const bestEffort = async (what: string, write: () => Promise<void>): Promise<void> => {
    try {
      await write();
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn(`projection write failed: ${what}`, { error: err instanceof Error ? err.message : String(err) });
    }
  };
  const project = (stepId: string, event: StepEvent) =>
    bestEffort(`${stepId} ${event.kind}`, () => projection.projectStep({ run_id: runId, step_id: stepId, event }));
  const recordOutcome = (outcome: RunOutcome) =>
    bestEffort(`outcome ${outcome.status}`, () => projection.recordOutcome({ run_id: runId, outcome }));
  const remaining = (from: number): RunOutcome['stepUpdates'] =>
    snapshot.steps.slice(from).map((s) => ({ id: s.id, status: 'skipped' as const }));

  for (const [index, step] of snapshot.steps.entries()) {
    current = step.id;
    stepStatus[step.id] = 'running';
    try {
      const ctx: RenderContext = { input: snapshot.input, steps: outputs };
      const result = await runStep(step, ctx, {
        runId,
        ownerId: snapshot.owner_id,
        spend,
        gate,
        project,
        setStatus: (s) => (runStatus = s),
      });
      outputs[step.id] = result.output;
      if (result.usage) {
        usage.llm_calls += result.usage.llm_calls;
        usage.input_tokens += result.usage.input_tokens;
        usage.output_tokens += result.usage.output_tokens;
      }
      stepStatus[step.id] = 'completed';
    } catch (err) {
      stepStatus[step.id] = 'failed';
      if (isCancellation(err)) {
        runStatus = 'cancelled';
        const outcome: RunOutcome = {
          status: 'cancelled',
          error: { step_id: step.id, reason: 'cancelled', message: 'the run was cancelled' },
          stepUpdates: [
            { id: step.id, status: 'failed', error: { reason: 'cancelled', message: 'cancelled' } },
            ...(remaining(index + 1) ?? []),
          ],
        };
        await CancellationScope.nonCancellable(() => recordOutcome(outcome));
        throw err;
      }
      runStatus = 'failed';
      const runError: RunError = toRunError(step.id, err);
      await recordOutcome({
        status: 'failed',
        error: runError,
        stepUpdates: [
          { id: step.id, status: 'failed', error: { reason: runError.reason, message: runError.message } },
          ...(remaining(index + 1) ?? []),
        ],
      });
      throw ApplicationFailure.nonRetryable(
        `step "${step.id}" failed: ${runError.message}`,
        RUN_FAILED_FAILURE_TYPE,
        runError,
      );
    }
  }

  current = null;
  runStatus = 'completed';
  await recordOutcome({
    status: 'completed',
    error: null,
    stepUpdates: snapshot.steps.map((s) => ({ id: s.id, status: 'completed' as const })),
  });
  const small = JSON.stringify(outputs).length <= RESULT_OUTPUTS_LIMIT_BYTES;
  return { outputs: small ? outputs : {}, usage };
}

interface StepDeps {
  runId: string;
  ownerId: string;
  spend: RunSpend;
  gate: ApprovalGate;
  project(stepId: string, event: StepEvent): Promise<void>;
  setStatus(status: RunStatus): void;
}

interface StepResult {
  output: JsonValue | OutputRef;
  usage?: Usage;
}

async function runStep(step: StepSnapshot, ctx: RenderContext, deps: StepDeps): Promise<StepResult> {
  switch (step.kind) {
    case 'agent': {
      const input = render(step.input, ctx);
      await deps.project(step.id, { kind: 'running' });
      const outcome = await runAgentStep(step, input, {
        runId: deps.runId,
        stepId: step.id,
        ownerId: deps.ownerId,
        spend: deps.spend,
      });
      await deps.project(step.id, {
        kind: 'completed',
        output: outcome.output,
        usage: outcome.usage,
        turns: outcome.turns,
      });
      return { output: outcome.output, usage: outcome.usage };
    }
    case 'action':
      switch (step.action_type) {
        case 'delay':
          return { output: await performDelay(step, render(step.config, ctx), deps) };
        case 'approval':
          return { output: await performApproval(step, render(step.config, ctx), deps) };
        case 'send_email':
        case 'http_request':
        case 'transform': {
          const config = render(step.config, ctx);
          const input = render(step.input, ctx);
          const { runActionStep } = proxyActivities<Activities>({
            startToCloseTimeout: `${step.timeout_seconds} seconds`,
            // Heartbeats carry cancellation to the running activity and notice a dead worker before the timeout.
            heartbeatTimeout: `${Math.min(step.timeout_seconds, 10)} seconds`,
            retry: {
              maximumAttempts: step.retry.max_attempts,
              initialInterval: '500 ms',
              backoffCoefficient: 2,
              maximumInterval: '30 seconds',
            },
          });
          const result = await runActionStep({
            run_id: deps.runId,
            step_id: step.id,
            action_type: step.action_type,
            config: config as Record<string, JsonValue>,
            input,
            max_attempts: step.retry.max_attempts,
          });
          // Only when the activity's own completion write failed (older histories never carry the flag, so they
          // replay unchanged): a step that completed during a database outage must not lose its output.
          if (result.projected === false) await deps.project(step.id, { kind: 'completed', output: result.output });
          return { output: result.output };
        }
      }
  }
}
