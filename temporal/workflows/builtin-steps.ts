/**
 * The action steps the workflow performs itself, without an activity: `delay` (a durable timer — it survives worker
 * restarts and costs nothing while it waits) and `approval` (the run waits for the approve update).
 */
import { ApplicationFailure, condition, sleep } from '@temporalio/workflow';
import type { JsonValue } from '../contract/json';
import { REJECTED_FAILURE_TYPE, type ApprovalDecision } from '../contract/messages';
import type { ActionStepSnapshot, RunStatus } from '../contract/run';
import type { StepEvent } from '../contract/steps';

/** Shared between the approve update handler and the waiting step. */
export interface ApprovalGate {
  waitingFor: string | null;
  decision: ApprovalDecision | undefined;
}

interface BuiltinDeps {
  gate: ApprovalGate;
  project(stepId: string, event: StepEvent): Promise<void>;
  setStatus(status: RunStatus): void;
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

export async function performDelay(step: ActionStepSnapshot, config: JsonValue, deps: BuiltinDeps): Promise<JsonValue> {
  const seconds = numberField(config, 'seconds');
  const until = stringField(config, 'until');
  // Workflow time (Date.now() in the sandbox) is replay-safe.
  const now = Date.now();
  let dueAt: number;
  if (seconds !== undefined && seconds >= 0 && until === undefined) dueAt = now + seconds * 1000;
  else if (until !== undefined && seconds === undefined && !Number.isNaN(Date.parse(until))) dueAt = Date.parse(until);
  else throw invalid(step, 'seconds: exactly one of seconds or until (ISO 8601) is required');
  await deps.project(step.id, { kind: 'running' });
  const waitMs = Math.max(0, dueAt - now);
  if (waitMs > 0) await sleep(waitMs);
  const output = { until: new Date(dueAt).toISOString(), waited_seconds: waitMs / 1000 };
  await deps.project(step.id, { kind: 'completed', output });
  return output;
}

/** Read through a function: TypeScript would keep the narrowing of the assignment above across the await. */
function currentDecision(gate: ApprovalGate): ApprovalDecision | undefined {
  return gate.decision;
}

export async function performApproval(
  step: ActionStepSnapshot,
  config: JsonValue,
  deps: BuiltinDeps,
): Promise<JsonValue> {
  const timeoutSeconds = numberField(config, 'timeout_seconds');
  deps.gate.waitingFor = step.id;
  deps.gate.decision = undefined;
  deps.setStatus('waiting');
  await deps.project(step.id, { kind: 'waiting' });
  const decided = await (timeoutSeconds !== undefined
    ? condition(() => deps.gate.decision !== undefined, timeoutSeconds * 1000)
    : condition(() => deps.gate.decision !== undefined).then(() => true));
  const decision = currentDecision(deps.gate);
  deps.gate.waitingFor = null;
  deps.setStatus('running');
  if (!decided || !decision) {
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
  await deps.project(step.id, { kind: 'completed', output });
  return output;
}
