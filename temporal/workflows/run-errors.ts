/** Turns whatever stopped a step into the run's `error` {step_id, reason, message}: by failure class, never by text. */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { REJECTED_FAILURE_TYPE } from '../../domain/messages';
import { RenderError } from '../../domain/render';
import { BUDGET_EXCEEDED_FAILURE_TYPE, type RunError } from '../../domain/run';
import { ConditionError } from '../../domain/condition';
import { StepFailure } from './run-env';

/** ApplicationFailure types that are reasons of their own (others are `non_retryable`). */
const REASON_BY_TYPE: Record<string, string> = {
  [REJECTED_FAILURE_TYPE]: 'rejected',
  approval_timeout: 'timeout',
  turn_limit: 'turn_limit',
  loop_limit: 'loop_limit',
  invalid_output: 'invalid_output',
  agent_unavailable: 'agent_unavailable',
  [BUDGET_EXCEEDED_FAILURE_TYPE]: 'budget_exceeded',
};

/** Failure types of an activity that are the run's reason themselves (the user's daily token budget). */
const ACTIVITY_REASON_BY_TYPE: Record<string, string> = {
  [BUDGET_EXCEEDED_FAILURE_TYPE]: 'budget_exceeded',
};

export function toRunError(stepId: string, err: unknown): RunError {
  if (err instanceof StepFailure) return { step_id: stepId, ...err.error };
  if (err instanceof RenderError) return { step_id: stepId, reason: 'missing_reference', message: err.message };
  if (err instanceof ConditionError) return { step_id: stepId, reason: 'invalid_condition', message: err.message };
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    const message = cause?.message || err.message;
    const code = cause instanceof ApplicationFailure && cause.type ? { code: cause.type } : {};
    const own = cause instanceof ApplicationFailure && cause.type ? ACTIVITY_REASON_BY_TYPE[cause.type] : undefined;
    if (own) return { step_id: stepId, reason: own, message, ...code };
    if (cause instanceof TimeoutFailure || err.retryState === 'TIMEOUT') {
      return { step_id: stepId, reason: 'timeout', message: message || 'the step timed out', ...code };
    }
    if (err.retryState === 'MAXIMUM_ATTEMPTS_REACHED') {
      return { step_id: stepId, reason: 'attempts_exhausted', message, ...code };
    }
    return { step_id: stepId, reason: 'non_retryable', message, ...code };
  }
  if (err instanceof ApplicationFailure) {
    const reason = (err.type && REASON_BY_TYPE[err.type]) ?? 'non_retryable';
    return { step_id: stepId, reason, message: err.message, ...(err.type ? { code: err.type } : {}) };
  }
  return { step_id: stepId, reason: 'internal', message: err instanceof Error ? err.message : String(err) };
}
