/**
 * The run budget, enforced in workflow code around every model call of every agent step. The counts live in
 * workflow state (RunSpend), which Temporal rebuilds from history on replay: a worker crash cannot reset them, and
 * a run whose snapshot has no budget (started before budgets existed) is never checked, so it replays unchanged.
 * The checks issue no commands; they only throw, and only in runs that have a budget.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { RunSpend } from '../contract/agent';
import { BUDGET_EXCEEDED_FAILURE_TYPE, type Usage } from '../contract/run';

function exceeded(message: string, spend: RunSpend, stepUsage: Usage): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, BUDGET_EXCEEDED_FAILURE_TYPE, {
    usage: stepUsage,
    run: { model_calls: spend.model_calls, tokens: spend.tokens, ...spend.budget },
  });
}

/** Why the budget refuses the next model call (its call budget is used up or its tokens are spent), or null. */
function refusal(spend: RunSpend): string | null {
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
  return refusal(spend) === null;
}

/** Before a model call: refuses the call when it would exceed the run's call budget or the tokens are spent. */
export function assertBudgetAllowsCall(spend: RunSpend, stepUsage: Usage): void {
  const refused = refusal(spend);
  if (refused !== null) throw exceeded(refused, spend, stepUsage);
}

/** Tokens the next call may use before the run's tokens go over the budget (recordCall), or null without a budget. */
export function tokensLeft(spend: RunSpend): number | null {
  return spend.budget ? spend.budget.max_tokens - spend.tokens : null;
}

/** After a model call: counts it, and fails the step when this call pushed the run's tokens over the budget. */
export function recordCall(spend: RunSpend, call: { input_tokens: number; output_tokens: number }, stepUsage: Usage) {
  spend.model_calls += 1;
  spend.tokens += call.input_tokens + call.output_tokens;
  const budget = spend.budget;
  if (budget && spend.tokens > budget.max_tokens) {
    throw exceeded(
      `run budget exceeded: max_tokens is ${budget.max_tokens} and the run has used ${spend.tokens} tokens`,
      spend,
      stepUsage,
    );
  }
}
