/**
 * The events the projection's writers log (db/step-states.ts, db/run-end.ts): one per step state change, keyed by what happened to which
 * execution, so a retried write logs nothing new. Agent turns are logged by the agent activities (agentTurnEvent).
 */
import type { Db } from 'mongodb';
import { parseExecutionId } from '../domain/exec-id';
import type { JsonObject, JsonValue } from '../domain/json';
import { isOutputRef, type OutputRef, type Usage } from '../domain/run';
import type { StepError } from '../domain/steps';
import { appendRunEvent, appendRunEvents, type NewRunEvent, type SeqGrant } from './run-events';

/**
 * The tool call an agent step waits for (a destructive MCP tool's, decision 0410): the `index`th call of the model
 * answer at `transcript_seq` in the execution's transcript — the same seq as that answer's `agent.model_call`. The pair
 * is unique in an execution, so it keys each of its waits; `name` is the tool as the model called it.
 */
export interface WaitedToolCall {
  transcript_seq: number;
  index: number;
  name: string;
}

/** Outputs up to this size ride in the `step.completed` event; larger ones are named by size (the status has them). */
export const EVENT_OUTPUT_INLINE_BYTES = 16 * 1024;

export type StepChange =
  | { type: 'step.started'; attempt: number }
  | { type: 'step.retrying'; attempt: number; error: StepError }
  | { type: 'step.waiting'; tool_call?: WaitedToolCall }
  | { type: 'step.resumed'; tool_call: WaitedToolCall; approved: boolean }
  | { type: 'step.completed'; output: JsonValue | OutputRef; usage?: Usage; reused_from_run_id?: string }
  | { type: 'step.failed'; error: StepError }
  | { type: 'step.skipped'; reason: string }
  | { type: 'step.child_run'; child_run_id: string };

/** `<transcript seq>:<index>`: the call in its execution's transcript (event keys, the step's and inbox's wait). */
export function waitedCallKey(call: WaitedToolCall): string {
  return `${call.transcript_seq}:${call.index}`;
}

function keyOf(execId: string, change: StepChange): string {
  switch (change.type) {
    case 'step.started':
    case 'step.retrying':
      return `${execId}:${change.type}:${change.attempt}`;
    case 'step.waiting':
      // An approval step waits once (its key predates agents' waits); an agent step once per tool call it asks about.
      return change.tool_call
        ? `${execId}:${change.type}:${waitedCallKey(change.tool_call)}`
        : `${execId}:${change.type}`;
    case 'step.resumed':
      return `${execId}:${change.type}:${waitedCallKey(change.tool_call)}`;
    case 'step.completed':
    case 'step.failed':
    case 'step.skipped':
    case 'step.child_run':
      return `${execId}:${change.type}`;
  }
}

function outputFields(output: JsonValue | OutputRef): JsonObject {
  if (isOutputRef(output)) return { output_ref: { bytes: output.bytes } };
  const bytes = Buffer.byteLength(JSON.stringify(output), 'utf8');
  return bytes <= EVENT_OUTPUT_INLINE_BYTES ? { output } : { output_ref: { bytes } };
}

function dataOf(change: StepChange): JsonObject {
  switch (change.type) {
    case 'step.started':
      return { attempt: change.attempt };
    case 'step.retrying':
      return { attempt: change.attempt, error: { reason: change.error.reason, message: change.error.message } };
    case 'step.waiting':
      return change.tool_call ? { tool_call: { ...change.tool_call } } : {};
    case 'step.resumed':
      return { tool_call: { ...change.tool_call }, approved: change.approved };
    case 'step.completed':
      return {
        ...outputFields(change.output),
        ...(change.usage ? { usage: { ...change.usage } } : {}),
        ...(change.reused_from_run_id ? { reused_from_run_id: change.reused_from_run_id } : {}),
      };
    case 'step.failed':
      return { error: { reason: change.error.reason, message: change.error.message } };
    case 'step.skipped':
      return { reason: change.reason };
    case 'step.child_run':
      return { child_run_id: change.child_run_id };
  }
}

/** The step an execution belongs to (a plain step's execution id is its step id). */
export function stepOf(execId: string): string {
  return parseExecutionId(execId)?.stepId ?? execId;
}

/** Whether the change ends its execution (it then leaves the approvals inbox). */
export function endsExecution(change: StepChange): boolean {
  return change.type === 'step.completed' || change.type === 'step.failed' || change.type === 'step.skipped';
}

/**
 * Logs state changes of one execution (a step, a map item, a loop iteration), in order, in one write, after the
 * events in `before` (an agent's model call, logged with the step write it led to). `seqs`: the seqs the caller's
 * own write allocated for them (db/run-events.ts), if it did.
 */
export async function logStepChange(
  db: Db,
  runId: string,
  execId: string,
  change: StepChange | StepChange[],
  seqs?: SeqGrant,
  before: NewRunEvent[] = [],
): Promise<void> {
  const changes = Array.isArray(change) ? change : [change];
  await appendRunEvents(db, runId, [...before, ...stepChangeEvents([{ execId, changes }])], seqs);
}

/** The events of executions' state changes, in the order given (for a writer that appends them with others). */
export function stepChangeEvents(entries: { execId: string; changes: StepChange[] }[]): NewRunEvent[] {
  return entries.flatMap(({ execId, changes }) =>
    changes.map((c) => ({
      type: c.type,
      key: keyOf(execId, c),
      data: { exec_id: execId, step_id: stepOf(execId), ...dataOf(c) },
    })),
  );
}

export type AgentTurnEvent =
  | {
      type: 'agent.model_call';
      turn: number;
      /** `estimated`: the provider reported no usage (temporal/llm/usage-estimate.ts). */
      usage: { input_tokens: number; output_tokens: number; estimated?: true };
      tool_calls: number;
      final: boolean;
    }
  | { type: 'agent.tool_call'; turn: number; tool: string; ok: boolean; summary: string };

/** An agent turn's event; `seq` is the transcript entry's, stable across the activity's attempts (its key). */
export function agentTurnEvent(execId: string, seq: number, event: AgentTurnEvent): NewRunEvent {
  const { type, ...fields } = event;
  return {
    type,
    key: `${execId}:transcript:${seq}`,
    data: { exec_id: execId, step_id: stepOf(execId), transcript_seq: seq, ...fields },
  };
}

/** Logs an agent turn on its own (db/step-states.ts logs a model call with the step write that follows it). */
export async function logAgentTurn(
  db: Db,
  runId: string,
  execId: string,
  seq: number,
  event: AgentTurnEvent,
): Promise<void> {
  await appendRunEvent(db, runId, agentTurnEvent(execId, seq, event));
}
