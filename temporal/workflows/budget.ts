/**
 * The run budget, enforced in workflow code around every model call of every agent step. The counts live in
 * workflow state (RunSpend), which Temporal rebuilds from history on replay: a worker crash cannot reset them. A run
 * whose snapshot has no budget is counted but never refused.
 *
 * A call is reserved before its activity is scheduled (reserveCall): the workflow is single-threaded, so a
 * reservation taken synchronously is atomic across the run's concurrent branches and map items, and no two of them
 * can both take the last call. A call that fails gives its reservation back (releaseCall); one that answers adds its
 * tokens (settleCall). Tokens cannot be known before a call: the next call is refused once the tokens are spent, so
 * concurrent calls overshoot max_tokens by at most one call's tokens each.
 *
 * A refusal is final only once no reserved call is in flight: until then the refused call waits, because a call in
 * flight that fails gives its reservation back (and the waiting call is then made), and because the refusal fails
 * its step, which may cancel the branches and items whose calls the budget granted — a map at concurrency 4 under
 * `max_model_calls: 2` would otherwise make no call at all. So a run makes exactly the calls its budget allows,
 * then fails with `budget_exceeded` (docs/runs.md, "Under concurrency").
 * The checks issue no commands of their own (the wait is a condition); they only throw, and only in runs that have a
 * budget.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { RunSpend } from '../../domain/agent';
import { BUDGET_EXCEEDED_FAILURE_TYPE, type Usage } from '../../domain/run';

/** The step's failure when the run's budget refuses a call or a call went over it. */
export function budgetExceeded(message: string, spend: RunSpend, stepUsage: Usage): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, BUDGET_EXCEEDED_FAILURE_TYPE, {
    usage: stepUsage,
    run: { model_calls: spend.model_calls, tokens: spend.tokens, ...spend.budget },
  });
}

/** Why the budget refuses the next model call (its call budget is used up or its tokens are spent), or null. */
export function budgetRefusal(spend: RunSpend): string | null {
  const budget = spend.budget;
  if (!budget) return null;
  if (spend.model_calls + 1 > budget.max_model_calls) {
    return `run budget exceeded: max_model_calls is ${budget.max_model_calls} and the run has made ${spend.model_calls} model calls`;
  }
  if (spend.tokens >= budget.max_tokens) {
    return `run budget exceeded: max_tokens is ${budget.max_tokens} and the run has used ${spend.tokens} tokens`;
  }
  return null;
}

/** Whether the budget allows one more model call (what assertBudgetAllowsCall checks, without throwing). */
export function budgetAllowsCall(spend: RunSpend): boolean {
  return budgetRefusal(spend) === null;
}

/** Refuses the next call when the budget would not allow it. */
function assertBudgetAllowsCall(spend: RunSpend, stepUsage: Usage): void {
  const refused = budgetRefusal(spend);
  if (refused !== null) throw budgetExceeded(refused, spend, stepUsage);
}

/**
 * Whether the budget refuses the next call while reserved calls are still in flight: the refusal is not final yet,
 * and the call waits (untilVerdict) before it reserves (see above).
 */
export function verdictPending(spend: RunSpend): boolean {
  return !budgetAllowsCall(spend) && spend.in_flight > 0;
}

/** Waits until the budget allows a call or no reserved call is in flight. Several waiters may wake for one call. */
export function untilVerdict(spend: RunSpend): Promise<void> {
  return condition(() => !verdictPending(spend));
}

/** Before a model call: reserves it, or refuses it when the budget would not allow it. */
export function reserveCall(spend: RunSpend, stepUsage: Usage): void {
  assertBudgetAllowsCall(spend, stepUsage);
  spend.model_calls += 1;
  spend.in_flight += 1;
}

/** A reserved call that failed (no answer, no tokens): the call is given back. */
export function releaseCall(spend: RunSpend): void {
  spend.model_calls -= 1;
  spend.in_flight -= 1;
}

/** After a reserved call answered: adds its tokens, and fails the step when they pushed the run over the budget. */
export function settleCall(spend: RunSpend, call: { input_tokens: number; output_tokens: number }, stepUsage: Usage) {
  spend.in_flight -= 1;
  addTokens(spend, call, stepUsage);
}

function addTokens(spend: RunSpend, call: { input_tokens: number; output_tokens: number }, stepUsage: Usage) {
  spend.tokens += call.input_tokens + call.output_tokens;
  const budget = spend.budget;
  if (budget && spend.tokens > budget.max_tokens) {
    throw budgetExceeded(
      `run budget exceeded: max_tokens is ${budget.max_tokens} and the run has used ${spend.tokens} tokens`,
      spend,
      stepUsage,
    );
  }
}
