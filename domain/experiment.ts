/**
 * An experiment's shape as the API, the worker's activities and the experiment workflow share it (issue #47 item 2):
 * its statuses, its budget, the arguments of its workflows, and the one rule that names the run of an item ×
 * repetition. The workflow's history holds only ids and counts; items, scorers and results live in MongoDB.
 */

/** Temporal workflow type of an experiment (workflow id = experiment id). */
export const EXPERIMENT_WORKFLOW_TYPE = 'experimentWorkflow';

/**
 * `live`: every item runs the workflow for real. `replay`: every item recorded from a run runs the workflow with the
 * steps that did not change answered from that run's record (docs/decisions/0640-replay-experiments.md).
 */
export const EXPERIMENT_MODES = ['live', 'replay'] as const;
export type ExperimentMode = (typeof EXPERIMENT_MODES)[number];

/**
 * Inside a step that runs again in replay, what a tool call gets: `recorded` — the recorded result when the source
 * run's same step made a call with the same tool and arguments, else a live call; `live` — always a live call;
 * `error_on_miss` — the recorded result, and a call the record does not hold fails the item.
 */
export const REPLAY_TOOL_CALLS = ['recorded', 'live', 'error_on_miss'] as const;
export type ReplayToolCalls = (typeof REPLAY_TOOL_CALLS)[number];
export const DEFAULT_REPLAY_TOOL_CALLS: ReplayToolCalls = 'recorded';

/** A replay experiment's options. */
export interface ExperimentReplay {
  tool_calls: ReplayToolCalls;
}

/** The failure type of a tool call a replay's record does not hold, in `error_on_miss` mode. */
export const REPLAY_MISS_FAILURE_TYPE = 'replay_miss';

export const EXPERIMENT_STATUSES = [
  'queued',
  'running',
  'completed',
  'budget_exhausted',
  'cancelled',
  'failed',
] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];
export const TERMINAL_EXPERIMENT_STATUSES: readonly ExperimentStatus[] = [
  'completed',
  'budget_exhausted',
  'cancelled',
  'failed',
];

/** The hard budget: no new item starts once either is reached (absent: no limit of that kind). */
export interface ExperimentBudget {
  max_tokens?: number | undefined;
  max_model_calls?: number | undefined;
}

/** Tokens and model calls spent so far (every item's run, counted once when its result is stored). */
export interface ExperimentSpend {
  tokens: number;
  model_calls: number;
}

/**
 * Where one execution of the experiment workflow starts: the first unit (item × repetition, counted item-major) not
 * yet run, and the spend so far. A fresh experiment starts at unit 0; each continue-as-new carries these two only.
 */
export interface ExperimentPlanRequest {
  experiment_id: string;
  next_unit: number;
}

/**
 * What one execution of the experiment workflow learns from its first activity: how to run the items, and the ids of
 * the items its window of units touches (not the whole list: an experiment over 10 000 items keeps each execution's
 * history small, decision 0630).
 */
export interface ExperimentPlan {
  /** Items pinned in the version, all of them (units = item_count × repetitions). */
  item_count: number;
  /** The place of `item_ids[0]` in the pinned list. */
  first_item: number;
  /** The items of this execution's window, in list order. */
  item_ids: string[];
  repetitions: number;
  concurrency: number;
  budget: ExperimentBudget;
  /** Units this execution runs at most before it continues as new (the worker's EXPERIMENT_UNITS_PER_EXECUTION). */
  units_per_execution: number;
}

/** The items a window of `units` units from `nextUnit` touches: `[first, first + count)` of the pinned list. */
export function planWindow(
  nextUnit: number,
  units: number,
  repetitions: number,
  itemCount: number,
): { first: number; count: number } {
  const first = Math.min(itemCount, Math.floor(nextUnit / repetitions));
  const end = Math.min(itemCount, Math.ceil((nextUnit + units) / repetitions));
  return { first, count: end - first };
}

/** One item × repetition, the child workflow's argument. */
export interface ExperimentUnit {
  experiment_id: string;
  item_id: string;
  repetition: number;
  /** The item's place in the pinned list (names its run). */
  index: number;
}

/** The end of one unit's run as the experiment workflow reads it back from the scoring activity. */
export interface UnitOutcome {
  spend: ExperimentSpend;
}

/**
 * The run id of an item × repetition: derived from the experiment id, so a resumed experiment (a killed worker) asks
 * for the same run again and createRun's idempotency (and Temporal's workflow-id uniqueness) keeps one run each.
 */
export function experimentRunId(experimentId: string, index: number, repetition: number): string {
  return `run_${experimentId.slice('exp_'.length)}-${index}-${repetition}`;
}

/** True once the spend reaches either limit of the budget. */
export function budgetSpent(budget: ExperimentBudget, spend: ExperimentSpend): boolean {
  return (
    (budget.max_tokens !== undefined && spend.tokens >= budget.max_tokens) ||
    (budget.max_model_calls !== undefined && spend.model_calls >= budget.max_model_calls)
  );
}
