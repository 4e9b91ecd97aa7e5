/**
 * The action steps the workflow performs itself, without an activity: `delay` (a durable timer — it survives worker
 * restarts and costs nothing while it waits) and `approval` (the execution waits for the approve update). Their
 * rendered configs are checked with the same schemas the action registry publishes (domain/builtin-actions.ts).
 */
import { ApplicationFailure, condition, sleep } from '@temporalio/workflow';
import type * as BuiltinActions from '../../domain/builtin-actions';

/**
 * The config parsers, required on first use: Temporal's reusable sandbox runs module code again for every execution,
 * and these bring zod, which only a run with a delay or an approval step needs.
 */
function builtinActions(): typeof BuiltinActions {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../domain/builtin-actions') as typeof BuiltinActions;
}
import type { JsonValue } from '../../domain/json';
import { REJECTED_FAILURE_TYPE } from '../../domain/messages';
import type { ActionStepSnapshot } from '../../domain/run';
import type { StepEvent } from '../../domain/steps';
import type { Approvals } from './approvals';

interface BuiltinDeps {
  approvals: Approvals;
  project(execId: string, event: StepEvent): Promise<unknown>;
}

/** A rendered config the action's schema refuses: the step fails as an activity's run-mode check would fail it. */
function invalid(step: ActionStepSnapshot, problem: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${step.id}.config.${problem}`, 'invalid_config');
}

export async function performDelay(
  step: ActionStepSnapshot,
  execId: string,
  config: JsonValue,
  deps: BuiltinDeps,
): Promise<JsonValue> {
  const parsed = builtinActions().parseDelayConfig(config);
  if (!parsed.ok) throw invalid(step, parsed.problem);
  const { seconds, until } = parsed.value;
  // Workflow time (Date.now() in the sandbox) is replay-safe.
  const now = Date.now();
  const dueAt = until !== undefined ? Date.parse(until) : now + (seconds ?? 0) * 1000;
  await deps.project(execId, { kind: 'running', input: config });
  const waitMs = Math.max(0, dueAt - now);
  if (waitMs > 0) await sleep(waitMs);
  const output = { until: new Date(dueAt).toISOString(), waited_seconds: waitMs / 1000 };
  await deps.project(execId, { kind: 'completed', output });
  return output;
}

export async function performApproval(
  step: ActionStepSnapshot,
  execId: string,
  config: JsonValue,
  deps: BuiltinDeps,
): Promise<JsonValue> {
  const parsed = builtinActions().parseApprovalConfig(config);
  if (!parsed.ok) throw invalid(step, parsed.problem);
  const timeoutSeconds = parsed.value.timeout_seconds;
  deps.approvals.startWaiting(execId);
  let decision;
  try {
    const since = Date.now(); // workflow time: replay-safe
    const approval = {
      message: parsed.value.message,
      instructions: parsed.value.instructions ?? null,
      waiting_since: new Date(since).toISOString(),
      deadline: timeoutSeconds !== undefined ? new Date(since + timeoutSeconds * 1000).toISOString() : null,
    };
    await deps.project(execId, { kind: 'waiting', approval, input: config });
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
