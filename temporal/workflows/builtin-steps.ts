/**
 * The action steps the workflow performs itself, without an activity: `delay` (a durable timer — it survives worker
 * restarts and costs nothing while it waits) and `approval` (the execution waits for the approve update).
 */
import { ApplicationFailure, condition, sleep } from '@temporalio/workflow';
import type { JsonValue } from '../contract/json';
import { REJECTED_FAILURE_TYPE } from '../contract/messages';
import type { ActionStepSnapshot } from '../contract/run';
import type { StepEvent } from '../contract/steps';
import type { Approvals } from './approvals';

interface BuiltinDeps {
  approvals: Approvals;
  project(execId: string, event: StepEvent): Promise<unknown>;
}

function numberField(config: JsonValue, name: string): number | undefined {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return undefined;
  const v = config[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function stringField(config: JsonValue, name: string): string | undefined {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return undefined;
  const v = config[name];
  return typeof v === 'string' ? v : undefined;
}

function invalid(step: ActionStepSnapshot, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${step.id}.config: ${message}`, 'invalid_config');
}

export async function performDelay(
  step: ActionStepSnapshot,
  execId: string,
  config: JsonValue,
  deps: BuiltinDeps,
): Promise<JsonValue> {
  const seconds = numberField(config, 'seconds');
  const until = stringField(config, 'until');
  // Workflow time (Date.now() in the sandbox) is replay-safe.
  const now = Date.now();
  let dueAt: number;
  if (seconds !== undefined && seconds >= 0 && until === undefined) dueAt = now + seconds * 1000;
  else if (until !== undefined && seconds === undefined && !Number.isNaN(Date.parse(until))) dueAt = Date.parse(until);
  else throw invalid(step, 'seconds: exactly one of seconds or until (ISO 8601) is required');
  await deps.project(execId, { kind: 'running' });
  const waitMs = Math.max(0, dueAt - now);
  if (waitMs > 0) await sleep(waitMs);
  const output = { until: new Date(dueAt).toISOString(), waited_seconds: waitMs / 1000 };
  await deps.project(execId, { kind: 'completed', output });
  return output;
}

export async function performApproval(
  _step: ActionStepSnapshot,
  execId: string,
  config: JsonValue,
  deps: BuiltinDeps,
): Promise<JsonValue> {
  const timeoutSeconds = numberField(config, 'timeout_seconds');
  deps.approvals.startWaiting(execId);
  let decision;
  try {
    await deps.project(execId, { kind: 'waiting' });
    if (timeoutSeconds !== undefined) await condition(() => deps.approvals.decided(execId), timeoutSeconds * 1000);
    else await condition(() => deps.approvals.decided(execId));
  } finally {
    decision = deps.approvals.finish(execId);
  }
  if (!decision) {
    throw ApplicationFailure.nonRetryable(`no decision within ${timeoutSeconds} s`, 'approval_timeout');
  }
  if (!decision.approved) {
    const why = decision.comment ? `: ${decision.comment}` : '';
    throw ApplicationFailure.nonRetryable(`rejected by ${decision.by}${why}`, REJECTED_FAILURE_TYPE);
  }
  const output = {
    approved: true,
    comment: decision.comment,
    decided_by: decision.by,
    decided_at: new Date().toISOString(),
  };
  await deps.project(execId, { kind: 'completed', output });
  return output;
}
