/**
 * The run workflow: one execution per run (workflow id = run id). Its input is the immutable RunSnapshot the API
 * built, never a database document. The steps form a graph (./graph.ts): each runs when its dependencies have
 * finished, one activity per side effect. Every step's activity writes its own step's progress into the `runs`
 * projection; what the workflow decides itself (delays, approvals, skips, map and loop progress, sub-workflows) and
 * the run's outcome go through one seam, `env.project` / `env.recordOutcome` (local activities, best effort). The run's outcome is derived from
 * the step states by deriveOutcome (domain/run-state.ts), the same function the status read and the
 * worker's reconciler (temporal/reconciler.ts) use for an end the workflow never saw.
 *
 * The order and kind of commands this code issues is what the replay test over test/temporal/histories/ holds: how
 * a change to them ships is docs/decisions/0430-shipping-workflow-changes.md.
 */
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import type { Activities } from '../activities';
import type { RunSpend } from '../../domain/agent';
import { parseExecutionId } from '../../domain/exec-id';
import { approveUpdate, progressQuery, type ApprovalDecision } from '../../domain/messages';
import type { RunResult, RunSnapshot, Usage } from '../../domain/run';
import { deriveOutcome, deriveRunStatus } from '../../domain/run-state';
import { RUN_FAILED_FAILURE_TYPE, type RunOutcome, type StepEvent } from '../../domain/steps';
import { Approvals } from './approvals';
import { Graph } from './graph';
import { addUsage, type RunEnv } from './run-env';
import { serveSharedBudget, shareBudgetWith } from './budget-share';
import { withinDeadline } from './deadline';
import { startWebhookDelivery } from './webhook';

/** Projection writes: idempotent, retried briefly; a projection that stays behind is fixed by the worker's reconciler. */
const projection = uncancelledLocalActivities({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 20, initialInterval: '200 ms', maximumInterval: '10 seconds' },
});

/** Storing a sub-workflow's large outputs for its parent (a regular activity: it may move megabytes). */
const { storeRunOutputs } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, initialInterval: '500 ms', maximumInterval: '10 seconds' },
});

/** Above this the workflow result leaves outputs out (the API reads them from the projection anyway). */
const RESULT_OUTPUTS_LIMIT_BYTES = 128 * 1024;

export async function runWorkflow(snapshot: RunSnapshot): Promise<RunResult> {
  const runId = workflowInfo().workflowId;
  const usage: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  const spend: RunSpend = { budget: snapshot.budget, model_calls: 0, tokens: 0, in_flight: 0 };
  const approvals = new Approvals();

  // Projection writes are bookkeeping: when they keep failing (MongoDB down for long) the run goes on, and the
  // worker's reconciler catches the projection up with Temporal. A cancellation still propagates.
  const bestEffort = async <T>(what: string, write: () => Promise<T>): Promise<T | null> => {
    try {
      return await write();
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn(`projection write failed: ${what}`, { error: err instanceof Error ? err.message : String(err) });
      return null;
    }
  };
  const tallies = new Map<string, Usage>();
  serveSharedBudget(spend);
  const env: RunEnv = {
    runId,
    snapshot,
    spend,
    usage,
    approvals,
    ...(snapshot.budget_root ? { shared: shareBudgetWith(snapshot.budget_root, runId) } : {}),
    tally: (execId, add) => {
      const stepId = parseExecutionId(execId)?.stepId ?? execId;
      const sum = tallies.get(stepId) ?? { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
      addUsage(sum, add);
      tallies.set(stepId, sum);
    },
    stepUsage: (stepId) => tallies.get(stepId),
    project: (execId: string, event: StepEvent) =>
      bestEffort(`${execId} ${event.kind}`, () => projection.projectStep({ run_id: runId, step_id: execId, event })),
    recordOutcome: async (outcome: RunOutcome) => {
      await bestEffort(`outcome ${outcome.status}`, () => projection.recordOutcome({ run_id: runId, outcome }));
    },
  };
  const graph = new Graph(env);
  /** Set when the run has ended (the query answers after the outcome is recorded, until the execution closes). */
  let ended: RunOutcome['status'] | undefined;
  const stepStates = () => [...graph.records].map(([id, r]) => ({ id, status: r.status }));

  setHandler(progressQuery, () => {
    // A running step whose execution waits for a decision shows as waiting (the graph only knows it started).
    const waiting = new Set(approvals.list().map((execId) => parseExecutionId(execId)?.stepId));
    const states = stepStates().map((s) =>
      s.status === 'running' && waiting.has(s.id) ? { ...s, status: 'waiting' as const } : s,
    );
    const running = states.filter((s) => s.status === 'running').map((s) => s.id);
    return {
      status: ended ?? deriveRunStatus('running', states),
      current_step: approvals.list()[0] ?? running[0] ?? null,
      steps: Object.fromEntries(states.map((s) => [s.id, s.status])),
    };
  });
  setHandler(
    approveUpdate,
    (decision) => {
      approvals.decide(decision);
      return { step_id: decision.step_id, approved: decision.approved };
    },
    {
      validator: (decision: ApprovalDecision) => {
        if (!approvals.accepts(decision.step_id)) {
          throw ApplicationFailure.nonRetryable(
            `step "${decision.step_id}" is not waiting for approval`,
            'not_waiting',
          );
        }
      },
    },
  );

  // A step that ends with the run keeps the calls it made (a map's items, a failed sub-workflow's run).
  const withUsage = (outcome: RunOutcome): RunOutcome => ({
    ...outcome,
    ...(outcome.stepUpdates
      ? {
          stepUpdates: outcome.stepUpdates.map((u) => {
            const used = u.status === 'completed' ? undefined : tallies.get(u.id);
            return used ? { ...u, usage: used } : u;
          }),
        }
      : {}),
  });
  const ran = await withinDeadline(snapshot.deadline_at, () => graph.run());
  if (ran.expired) {
    // The run's own deadline (./deadline.ts): recorded and announced like any other end.
    const outcome = withUsage(deriveOutcome(stepStates(), { kind: 'timed_out' }));
    ended = outcome.status;
    await CancellationScope.nonCancellable(async () => {
      await env.recordOutcome(outcome);
      await startWebhookDelivery(snapshot, runId, outcome.status);
    });
    throw ApplicationFailure.nonRetryable(
      outcome.error?.message ?? 'the run exceeded its time limit',
      RUN_FAILED_FAILURE_TYPE,
      outcome.error,
      runUsage(tallies),
    );
  }
  const stop = ran.result;
  if (stop?.kind === 'cancelled') {
    const outcome = withUsage(deriveOutcome(stepStates(), { kind: 'cancelled' }));
    ended = outcome.status;
    // The webhook of a cancelled run is delivered too: starting it must survive the cancellation being handled.
    await CancellationScope.nonCancellable(async () => {
      await env.recordOutcome(outcome);
      await startWebhookDelivery(snapshot, runId, outcome.status);
    });
    throw stop.cause;
  }
  if (stop?.kind === 'failed') {
    const outcome = withUsage(deriveOutcome(stepStates(), { kind: 'failed', error: stop.error }));
    ended = outcome.status;
    // Not cancellable: a cancellation arriving now must not leave the failure unrecorded (nor undelivered).
    await CancellationScope.nonCancellable(async () => {
      await env.recordOutcome(outcome);
      await startWebhookDelivery(snapshot, runId, outcome.status);
    });
    throw ApplicationFailure.nonRetryable(
      `step "${stop.error.step_id}" failed: ${stop.error.message}`,
      RUN_FAILED_FAILURE_TYPE,
      stop.error,
      // The second detail: every call the run made, for a parent whose sub-workflow step this run is.
      runUsage(tallies),
    );
  }

  const outcome = deriveOutcome(stepStates(), { kind: 'completed' });
  ended = outcome.status;
  await env.recordOutcome(outcome);
  await CancellationScope.nonCancellable(() => startWebhookDelivery(snapshot, runId, outcome.status));
  const outputs = graph.outputs();
  const small = JSON.stringify(outputs).length <= RESULT_OUTPUTS_LIMIT_BYTES;
  // Every call the run made, also those of steps that failed and went on (`usage` sums the completed steps).
  const result: RunResult = { outputs: small ? outputs : {}, usage: runUsage(tallies), steps: graph.statuses() };
  // A sub-workflow's parent needs its outputs whatever their size: they go to the blob store, by reference.
  if (!small && snapshot.parent) result.outputs_ref = await storeRunOutputs({ run_id: runId, outputs });
  return result;
}

/** The calls of every step of the run. */
function runUsage(tallies: ReadonlyMap<string, Usage>): Usage {
  const sum: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  for (const used of tallies.values()) addUsage(sum, used);
  return sum;
}
