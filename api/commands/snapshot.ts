/**
 * Resolves a workflow and its templates into the immutable RunSnapshot that is the run workflow's input: later edits
 * of the workflow or its templates never change a run in flight, and the workflow never reads a DB document.
 */
import type { Config } from '../../config';
import type { TemplateDoc } from '../../db/templates';
import type { WorkflowDoc, WorkflowStepDoc } from '../../db/workflows';
import { DEFAULT_MAX_TURNS } from '../../temporal/contract/agent';
import { resolveEgress } from '../../temporal/contract/egress';
import type { JsonObject } from '../../temporal/contract/json';
import type { RetrySettings, RunSnapshot, StepSnapshot } from '../../temporal/contract/run';
import { effectiveBudget, type BudgetConfig } from './budget';

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_ACTION_TIMEOUT_SECONDS = 60;
export const DEFAULT_AGENT_TIMEOUT_SECONDS = 300;

export function buildSnapshot(args: {
  runId: string;
  workflow: WorkflowDoc;
  templates: Map<string, TemplateDoc>;
  input: JsonObject;
  config: Pick<Config, 'LLM_DEFAULT_MODEL'> & BudgetConfig;
  now: Date;
}): RunSnapshot {
  const { workflow } = args;
  return {
    run_id: args.runId,
    workflow_id: workflow._id,
    workflow_name: workflow.name,
    owner_id: workflow.owner_id,
    input: args.input,
    steps: workflow.steps.map((step) => stepSnapshot(step, templateOf(args.templates, step), workflow, args.config)),
    budget: effectiveBudget(args.config, workflow.config),
    created_at: args.now.toISOString(),
  };
}

function templateOf(templates: Map<string, TemplateDoc>, step: WorkflowStepDoc): TemplateDoc {
  const t = templates.get(step.template_id);
  // checkWorkflow ran just before with the same map: a missing template here is a programming error.
  if (!t) throw new Error(`template ${step.template_id} of step ${step.id} not resolved`);
  return t;
}

function stepSnapshot(
  step: WorkflowStepDoc,
  template: TemplateDoc,
  workflow: WorkflowDoc,
  config: Pick<Config, 'LLM_DEFAULT_MODEL'>,
): StepSnapshot {
  const retry: RetrySettings = step.retry ?? workflow.config.retry ?? { max_attempts: DEFAULT_MAX_ATTEMPTS };
  const base = {
    id: step.id,
    template_id: template._id,
    template_name: template.name,
    input: step.input ?? null,
    retry,
  };
  if (template.step_type === 'action' && template.action_type) {
    return {
      ...base,
      kind: 'action',
      action_type: template.action_type,
      config: { ...template.config, ...(step.config ?? {}) },
      timeout_seconds: step.timeout_seconds ?? workflow.config.step_timeout_seconds ?? DEFAULT_ACTION_TIMEOUT_SECONDS,
    };
  }
  const outputSchema = step.output_schema ?? template.output_schema;
  return {
    ...base,
    kind: 'agent',
    prompt: step.prompt ?? template.default_prompt,
    tasks: step.tasks ?? template.default_tasks,
    tools: step.tools ?? template.default_tools,
    model: step.model ?? template.model ?? config.LLM_DEFAULT_MODEL,
    max_turns: step.max_turns ?? template.max_turns ?? DEFAULT_MAX_TURNS,
    egress: resolveEgress(template.egress, step.egress),
    ...(outputSchema ? { output_schema: outputSchema } : {}),
    ...(typeof template.config.temperature === 'number' ? { temperature: template.config.temperature } : {}),
    ...(typeof template.config.max_output_tokens === 'number'
      ? { max_output_tokens: template.config.max_output_tokens }
      : {}),
    timeout_seconds: step.timeout_seconds ?? workflow.config.step_timeout_seconds ?? DEFAULT_AGENT_TIMEOUT_SECONDS,
  };
}
