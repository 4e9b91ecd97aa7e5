/**
 * A sub-workflow step: another of the owner's workflows (snapshotted when the parent run started) runs as a Temporal
 * child workflow — a run of its own, with its own run id (`<parent run id>.<step>`), visible at `GET …/runs/:runId/status` and in
 * the Temporal Web UI. Cancelling the parent cancels the child (the default child cancellation type waits for it).
 */
import { ApplicationFailure, ChildWorkflowFailure, isCancellation, startChild } from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import { childRunId } from '../../domain/exec-id';
import type { JsonObject } from '../../domain/json';
import { render, type RenderContext } from '../../domain/render';
import {
  type RunError,
  type RunResult,
  type RunSnapshot,
  type Usage,
  type WorkflowStepSnapshot,
} from '../../domain/run';
import { ownerIdKey, workflowIdKey, workflowNameKey } from '../../domain/search-attributes';
import { RUN_FAILED_FAILURE_TYPE } from '../../domain/steps';
import { StepFailure, type RunEnv, type StepResult } from './run-env';

const { prepareChildRun } = uncancelledLocalActivities({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 20, initialInterval: '200 ms', maximumInterval: '10 seconds' },
});

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function runSubWorkflow(
  step: WorkflowStepSnapshot,
  execId: string,
  ctx: RenderContext,
  env: RunEnv,
): Promise<StepResult> {
  const input = render(step.input ?? {}, ctx);
  if (!isPlainObject(input)) {
    throw new StepFailure({ reason: 'invalid_input', message: 'a sub-workflow step input must render to an object' });
  }
  if (JSON.stringify(input).includes('"stepwise_blob"')) {
    throw new StepFailure({
      reason: 'invalid_input',
      message: 'a sub-workflow input cannot carry outputs over 64 KiB; pass a smaller part of them',
    });
  }
  const depth = (env.snapshot.parent?.depth ?? 0) + 1;
  const maxDepth = env.snapshot.limits?.max_depth ?? 3;
  if (depth > maxDepth) {
    throw new StepFailure({ reason: 'depth_limit', message: `sub-workflows nest at most ${maxDepth} deep` });
  }
  const id = childRunId(env.runId, execId);
  const budget = env.spend.budget;
  // The child reserves each call at the top-level run (./budget-share.ts).
  const sharing = budget !== undefined;
  const snapshot: RunSnapshot = {
    run_id: id,
    workflow_id: step.workflow.workflow_id,
    workflow_name: step.workflow.workflow_name,
    owner_id: env.snapshot.owner_id,
    input,
    steps: step.workflow.steps,
    // The child's own limit: what the parent had left when it started (the top-level run's count is the one that
    // holds across concurrent children).
    ...(budget
      ? {
          budget: {
            max_tokens: Math.max(budget.max_tokens - env.spend.tokens, 0),
            max_model_calls: Math.max(budget.max_model_calls - env.spend.model_calls, 0),
          },
        }
      : {}),
    created_at: new Date().toISOString(),
    ...(env.snapshot.limits ? { limits: env.snapshot.limits } : {}),
    parent: { run_id: env.runId, exec_id: execId, depth },
    ...(sharing ? { budget_root: env.snapshot.budget_root ?? env.runId } : {}),
  };
  const verdict = await prepareChildRun({
    snapshot,
    ...(step.workflow.input_schema ? { input_schema: step.workflow.input_schema } : {}),
  });
  if (!verdict.ok) throw new StepFailure({ reason: 'invalid_input', message: verdict.problem });
  await env.project(execId, { kind: 'running', input: snapshot.input });
  const handle = await startChild('runWorkflow', {
    workflowId: id,
    // The Web UI lists the child under its parent with this line.
    staticSummary: `${step.workflow.workflow_name} (${execId} of ${env.runId})`,
    // The Web UI's filters find a child run like any run: by its workflow's name or id, and its owner. Search
    // attributes are not part of replay's command matching, so histories recorded without them replay unchanged.
    typedSearchAttributes: [
      { key: workflowIdKey, value: step.workflow.workflow_id },
      { key: ownerIdKey, value: env.snapshot.owner_id },
      { key: workflowNameKey, value: step.workflow.workflow_name },
    ],
    args: [snapshot],
    ...(step.workflow.timeout_seconds ? { workflowExecutionTimeout: `${step.workflow.timeout_seconds} seconds` } : {}),
  });
  await env.project(execId, { kind: 'child', child_run_id: id, temporal_run_id: handle.firstExecutionRunId });
  let result: RunResult;
  try {
    result = (await handle.result()) as RunResult;
  } catch (err) {
    // A failed child's calls count for this step all the same (the child's failure carries them).
    const used = childUsageOf(err);
    if (used) env.tally(execId, used);
    throw asStepFailure(err, step.workflow.workflow_name, id);
  }
  env.tally(execId, result.usage);
  const output = result.outputs_ref ?? (result.outputs as unknown as JsonObject);
  const stored = await env.project(execId, { kind: 'completed', output, usage: result.usage });
  return { output: stored ?? output, usage: result.usage };
}

/** The child's own RunError, named for the parent's step. */
function asStepFailure(err: unknown, name: string, id: string): unknown {
  // A cancellation (the parent's, reaching the child) propagates as it is: the run ends cancelled, not failed.
  if (!(err instanceof ChildWorkflowFailure) || isCancellation(err)) return err;
  const cause = err.cause;
  const detail =
    cause instanceof ApplicationFailure && cause.type === RUN_FAILED_FAILURE_TYPE
      ? (cause.details?.[0] as RunError | undefined)
      : undefined;
  const where = detail?.step_id ? ` at step "${detail.step_id}"` : '';
  const why = detail?.message ?? cause?.message ?? err.message;
  return new StepFailure({
    reason: detail?.reason === 'cancelled' ? 'cancelled' : 'subworkflow_failed',
    message: `sub-workflow "${name}" (run ${id}) failed${where}: ${why}`,
    ...(detail?.reason ? { code: detail.reason } : {}),
  });
}

/** The calls a failed child run made: its failure's second detail (absent from runs before it). */
function childUsageOf(err: unknown): Usage | undefined {
  if (!(err instanceof ChildWorkflowFailure)) return undefined;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== RUN_FAILED_FAILURE_TYPE) return undefined;
  const used = cause.details?.[1] as Usage | undefined;
  return used && typeof used.llm_calls === 'number' ? used : undefined;
}
