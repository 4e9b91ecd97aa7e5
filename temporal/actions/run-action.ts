/**
 * What an activity calls for an action step: check the rendered config in run mode, then execute. Failures are
 * thrown as StepError subclasses (or library errors); the activity rethrows `toActivityError(err)` from
 * temporal/failures.ts, the one place that decides about retries.
 */
import { NonRetryableError } from '../failures';
import { validateActionConfig } from '../../domain/actions/catalog';
import { ACTIONS } from './registry';
import type { ActionContext, ActionDefinition, ActionType } from './types';

/** Runs the action `type` with an already rendered `config`. Resolves to the step output. */
export async function runAction(type: ActionType, config: unknown, ctx: ActionContext): Promise<unknown> {
  const checked = validateActionConfig(type, config, 'run');
  if (!checked.ok) {
    const message = checked.issues.map((i) => (i.path ? `config.${i.path}: ${i.message}` : `config: ${i.message}`));
    throw new NonRetryableError('invalid_config', message.join('; '), { details: { issues: checked.issues } });
  }
  const def = Object.hasOwn(ACTIONS, type) ? (ACTIONS as Record<string, ActionDefinition<string>>)[type] : undefined;
  if (!def) {
    throw new NonRetryableError('not_supported', `${type} is carried out by the workflow, not by an activity`);
  }
  return def.execute(checked.value, ctx);
}
