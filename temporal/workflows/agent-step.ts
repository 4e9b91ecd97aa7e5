/**
 * The agent step (issue 5 replaces this body with the durable agent loop). Until then an agent step fails with a
 * clear non-retryable error, so a workflow containing one ends `failed` naming the step instead of hanging.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentStepContext, AgentStepOutcome } from '../contract/agent';
import type { JsonValue } from '../contract/json';
import type { AgentStepSnapshot } from '../contract/run';

export async function runAgentStep(
  _step: AgentStepSnapshot,
  _input: JsonValue,
  _ctx: AgentStepContext,
): Promise<AgentStepOutcome> {
  throw ApplicationFailure.nonRetryable('agent steps are not available yet', 'agent_unavailable');
}
