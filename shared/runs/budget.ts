/**
 * The budget a run gets, shared by the API's start and the worker's scheduled start. The server's RUN_MAX_TOKENS /
 * RUN_MAX_MODEL_CALLS are each run's default and its ceiling: a workflow's `config.budget` may only lower them.
 */
import type { Config } from '../../config';
import type { WorkflowConfigDoc } from '../../db/workflows';
import type { RunBudget } from '../../domain/run';

export type BudgetConfig = Pick<Config, 'RUN_MAX_TOKENS' | 'RUN_MAX_MODEL_CALLS'>;

/** The budget a new run gets: the workflow's values, capped by the server's, which are also the defaults. */
export function effectiveBudget(config: BudgetConfig, workflowConfig: WorkflowConfigDoc): RunBudget {
  const wanted = workflowConfig.budget ?? {};
  return {
    max_tokens: Math.min(wanted.max_tokens ?? config.RUN_MAX_TOKENS, config.RUN_MAX_TOKENS),
    max_model_calls: Math.min(wanted.max_model_calls ?? config.RUN_MAX_MODEL_CALLS, config.RUN_MAX_MODEL_CALLS),
  };
}
