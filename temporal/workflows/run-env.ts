/**
 * What every part of one run's orchestration shares: the snapshot, the run's spending, the approvals waiting, and
 * the projection writes. Built once by runWorkflow (./run.ts); the graph, step and repeat modules take it.
 */
import type { RunSpend, SharedBudget } from '../../domain/agent';
import type { JsonValue } from '../../domain/json';
import type { OutputRef, RunError, RunSnapshot, Usage } from '../../domain/run';
import type { RunOutcome, StepEvent } from '../../domain/steps';
import type { Approvals } from './approvals';

export interface RunEnv {
  runId: string;
  snapshot: RunSnapshot;
  /** Shared by every agent step: the run budget counts across steps, failed ones included. */
  spend: RunSpend;
  /** LLM usage of the whole run (summed into the result). */
  usage: Usage;
  /** In a sub-workflow's run (started with a budget_root): its calls are reserved at the top-level run too. */
  shared?: SharedBudget;
  /** Counts calls as they are made, by step (of any execution of it): what a step used however it ends. */
  tally(execId: string, usage: Usage): void;
  /** The calls a step (all its executions) has made so far, or undefined when it made none. */
  stepUsage(stepId: string): Usage | undefined;
  approvals: Approvals;
  /** A projection write; best effort (the reconciler catches up). Returns what `completed` stored, else null. */
  project(execId: string, event: StepEvent): Promise<JsonValue | OutputRef | null>;
  recordOutcome(outcome: RunOutcome): Promise<void>;
}

/** What running one execution of a step gives back. */
export interface StepResult {
  output: JsonValue | OutputRef;
  usage?: Usage;
}

/**
 * A step failure decided in workflow code (a map item, a loop at its bound, a sub-workflow that failed) with the
 * RunError it stands for; toRunError passes it through.
 */
export class StepFailure extends Error {
  constructor(readonly error: Omit<RunError, 'step_id'>) {
    super(error.message);
    this.name = 'StepFailure';
  }
}

export function addUsage(into: Usage, add: Usage | undefined): void {
  if (!add) return;
  into.llm_calls += add.llm_calls;
  into.input_tokens += add.input_tokens;
  into.output_tokens += add.output_tokens;
  // A total with an estimated part is an estimate (domain/usage.ts).
  if (add.estimated) into.estimated = true;
}
