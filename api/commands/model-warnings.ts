/**
 * Warnings (not refusals) for template and workflow writes whose agent steps would run on a model of a provider this
 * deployment has not configured: such a run fails with `llm_not_configured`, and the person writing should hear it
 * now rather than from a failed run. Not a refusal: definitions are written before keys are set, exported between
 * stacks, and the API and the worker normally share one configuration but need not
 * (docs/decisions/0050-model-warnings-on-writes.md).
 */
import { z } from 'zod';
import type { Config } from '../../config';
import type { TemplateContent, TemplateDoc } from '../../db/templates';
import type { WorkflowStepDoc } from '../../db/workflows';
import { missingProviderSetting, type LlmProviderSettings } from '../../shared/llm-providers';

export const writeWarning = z
  .strictObject({
    code: z.enum(['model_provider_not_configured']).meta({ description: 'Stable; more codes may be added.' }),
    field: z.string().meta({ description: 'The field the warning is about (`model`, `steps[1].model`).' }),
    message: z.string().meta({ description: 'What runs would do, and the setting that changes it.' }),
  })
  .meta({ id: 'WriteWarning' });
export type WriteWarning = z.infer<typeof writeWarning>;

/** The optional `warnings` of a write's `data`: present only when there is one. */
export const warningsField = z
  .array(writeWarning)
  .min(1)
  .optional()
  .meta({
    description:
      'Present only when something written will not work as it stands (e.g. an agent model whose provider is not ' +
      'configured: its runs would fail with `llm_not_configured`). The write itself succeeded.',
  });

export type ModelSettings = LlmProviderSettings & Pick<Config, 'LLM_DEFAULT_MODEL'>;

/** `where`: how the message names the place (`model`, `steps[1] (draft)`); `isDefault`: the model is LLM_DEFAULT_MODEL. */
function warning(
  settings: ModelSettings,
  field: string,
  where: string,
  model: string,
  isDefault: boolean,
): WriteWarning[] {
  const setting = missingProviderSetting(settings, model);
  if (!setting) return [];
  const which = isDefault ? `${model} (the default model, LLM_DEFAULT_MODEL)` : model;
  return [
    {
      code: 'model_provider_not_configured',
      field,
      message:
        `${where}: ${which} needs ${setting}, which is not set: runs would fail with llm_not_configured. Set it, or ` +
        'name a model of a configured provider (a local one: compat:<name> with LLM_BASE_URL, docs/agents.md ' +
        '"Local models")',
    },
  ];
}

/** Warnings for an agent template as written (`model` null: the configured default). */
export function templateWarnings(
  settings: ModelSettings,
  template: Pick<TemplateContent, 'step_type' | 'model'>,
): WriteWarning[] {
  if (template.step_type !== 'agent') return [];
  const model = template.model ?? settings.LLM_DEFAULT_MODEL;
  return warning(settings, 'model', 'model', model, !template.model);
}

/** Warnings for a workflow's agent steps, by the model each would run with (step, else template, else default). */
export function workflowWarnings(
  settings: ModelSettings,
  steps: readonly WorkflowStepDoc[],
  templates: ReadonlyMap<string, Pick<TemplateDoc, 'step_type' | 'model'>>,
): WriteWarning[] {
  return steps.flatMap((step, i) => {
    const template = step.template_id ? templates.get(step.template_id) : undefined;
    if (!template || template.step_type !== 'agent') return [];
    const model = step.model ?? template.model ?? settings.LLM_DEFAULT_MODEL;
    return warning(settings, `steps[${i}].model`, `steps[${i}] (${step.id})`, model, !step.model && !template.model);
  });
}

/** `view` with the warnings added when there are any (the field is absent otherwise). */
export function withWarnings<T extends object>(view: T, warnings: WriteWarning[]): T & { warnings?: WriteWarning[] } {
  return warnings.length ? { ...view, warnings } : view;
}
