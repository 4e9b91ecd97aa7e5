/**
 * Run budgets on the API side. The server's RUN_MAX_TOKENS / RUN_MAX_MODEL_CALLS are each run's default and its
 * ceiling: a workflow's `config.budget` may only lower them. A value above the ceiling is refused on write (the user
 * learns at once), and capped again at run start, since the server's setting may have been lowered since.
 */
import type { BudgetConfig } from '../../shared/runs/budget';
import type { WorkflowConfigDoc } from '../../db/workflows';
import { BadRequestError } from '../http/errors';

/** Throws 400 naming the field when `config.budget` asks for more than the server allows. */
export function checkWorkflowBudget(config: BudgetConfig, workflowConfig: WorkflowConfigDoc): void {
  const budget = workflowConfig.budget;
  if (!budget) return;
  const problems: string[] = [];
  if (budget.max_tokens !== undefined && budget.max_tokens > config.RUN_MAX_TOKENS) {
    problems.push(`config.budget.max_tokens: at most ${config.RUN_MAX_TOKENS} (the server's RUN_MAX_TOKENS)`);
  }
  if (budget.max_model_calls !== undefined && budget.max_model_calls > config.RUN_MAX_MODEL_CALLS) {
    problems.push(
      `config.budget.max_model_calls: at most ${config.RUN_MAX_MODEL_CALLS} (the server's RUN_MAX_MODEL_CALLS)`,
    );
  }
  if (problems.length > 0) throw new BadRequestError(problems.join('; '), 'invalid_workflow');
}
