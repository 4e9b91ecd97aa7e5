/**
 * An experiment (issue #47 item 2; docs/decisions/0630-experiments.md): runs every pinned dataset item × repetition
 * as an ordinary run, at most `concurrency` at once, scores each ended run and stores its result, and stops starting
 * items once the budget is spent. Each run is a child workflow whose id is the run id derived from the experiment
 * (domain/experiment.ts), so a resumed experiment never starts an item twice; the history holds ids and counts only —
 * items, snapshots' sources, scores and results are read and written by the activities. An execution runs at most
 * `units_per_execution` units (fewer when Temporal suggests it), waits for those in flight, and continues as new with
 * the next unit's number and the spend: an experiment over 10 000 items keeps a bounded history.
 *
 * Cancelling the experiment cancels its children (Temporal's own cancellation: each run records `cancelled`), then
 * the experiment records its end.
 */
import {
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  executeChild,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunResult } from '../../domain/run';
import {
  budgetSpent,
  experimentRunId,
  type ExperimentSpend,
  type ExperimentStatus,
  type ExperimentUnit,
} from '../../domain/experiment';
import { runWorkflow } from './run';

/** Database reads and writes (scoring may evaluate JSONata in the bounded evaluator); retried while MongoDB is away. */
const { planExperiment, prepareExperimentRun, scoreExperimentUnit, finishExperiment } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 30, initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** The failure type of an item whose run could not be created (the parent records it as the item's failed result). */
export const EXPERIMENT_RUN_REFUSED = 'ExperimentRunRefused';

export interface ExperimentEnd {
  status: ExperimentStatus;
  spend: ExperimentSpend;
}

/**
 * The workflow's argument: the experiment, and where this execution starts (absent on the first): the next unit to
 * run and the spend so far. Ids and counts only, so a continue-as-new carries a few bytes whatever the dataset's size.
 */
export interface ExperimentArgs {
  experiment_id: string;
  next_unit?: number;
  spend?: ExperimentSpend;
}

export async function experimentWorkflow(args: ExperimentArgs): Promise<ExperimentEnd> {
  const experimentId = args.experiment_id;
  const start = args.next_unit ?? 0;
  const plan = await planExperiment({ experiment_id: experimentId, next_unit: start });
  const total = plan.item_count * plan.repetitions;
  // This execution's window: units [start, end). Units are counted item-major (item 0's repetitions first).
  const end = Math.min(total, start + plan.units_per_execution);
  const unitAt = (u: number): ExperimentUnit => {
    const index = Math.floor(u / plan.repetitions);
    return {
      experiment_id: experimentId,
      item_id: plan.item_ids[index - plan.first_item]!,
      repetition: u % plan.repetitions,
      index,
    };
  };
  let next = start;
  let spend: ExperimentSpend = args.spend ?? { tokens: 0, model_calls: 0 };
  let exhausted = false;
  // Set when Temporal finds the history large: no lane starts another unit, and the execution continues as new.
  let yielding = false;

  const lane = async () => {
    while (next < end && !yielding) {
      if (budgetSpent(plan.budget, spend)) {
        exhausted = true;
        return;
      }
      const unit = unitAt(next++);
      let error: string | undefined;
      try {
        await executeChild(experimentItemWorkflow, {
          workflowId: experimentRunId(experimentId, unit.index, unit.repetition),
          args: [unit],
        });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The run's own failure is on its record; a run that could not be created has only this message.
        error = causeMessage(err);
      }
      const outcome = await scoreExperimentUnit({ ...unit, error });
      // Results may land out of order: the spend only grows.
      spend = {
        tokens: Math.max(spend.tokens, outcome.spend.tokens),
        model_calls: Math.max(spend.model_calls, outcome.spend.model_calls),
      };
      if (workflowInfo().continueAsNewSuggested) yielding = true;
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(plan.concurrency, end - start)) }, lane));
  } catch (err) {
    const status: ExperimentStatus = isCancellation(err) ? 'cancelled' : 'failed';
    await CancellationScope.nonCancellable(() =>
      finishExperiment({
        experiment_id: experimentId,
        status,
        message: status === 'failed' ? causeMessage(err) : null,
      }),
    );
    throw err;
  }
  const spent = exhausted || (next < total && budgetSpent(plan.budget, spend));
  // Every unit started so far has been scored: the next execution starts where this one stopped.
  if (!spent && next < total) return continueAsNew<typeof experimentWorkflow>({ ...args, next_unit: next, spend });
  const status: ExperimentStatus = spent ? 'budget_exhausted' : 'completed';
  const message =
    status === 'budget_exhausted'
      ? `the budget is spent (${budgetText(plan.budget, spend)}): ${total - next} of ${total} runs not started`
      : null;
  await finishExperiment({ experiment_id: experimentId, status, message });
  return { status, spend };
}

/**
 * One item × repetition: its first activity creates the run (experiment_id on its record), then the execution
 * continues as the ordinary run workflow, inline — one execution and one status, as a scheduled run has.
 */
export async function experimentItemWorkflow(unit: ExperimentUnit): Promise<RunResult> {
  const prepared = await prepareExperimentRun({ ...unit, temporal_run_id: workflowInfo().runId });
  if (!prepared.ok) throw ApplicationFailure.nonRetryable(prepared.message, EXPERIMENT_RUN_REFUSED);
  return runWorkflow(prepared.snapshot);
}

function budgetText(budget: { max_tokens?: number; max_model_calls?: number }, spend: ExperimentSpend): string {
  const parts: string[] = [];
  if (budget.max_tokens !== undefined) parts.push(`${spend.tokens} of ${budget.max_tokens} tokens`);
  if (budget.max_model_calls !== undefined) parts.push(`${spend.model_calls} of ${budget.max_model_calls} model calls`);
  return parts.join(', ');
}

function causeMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && 'cause' in e && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
