/**
 * The tool call a model asked for, as its turn's transcript entry holds it: what a tool activity (and an approval of
 * one) acts on, read by the (seq, index) the workflow passes instead of carrying the arguments through history. And
 * the call's result as the transcript keeps it, written the same way whichever kind of tool (built-in or MCP) ran.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { logAgentTurn } from '../../../db/step-events';
import { getTranscriptEntry, putTranscriptEntry, TranscriptSupersededError } from '../../../db/transcripts';
import type { JsonValue } from '../../../domain/json';
import type { LlmToolCall } from '../../../domain/transcript';

export interface ToolCallAt {
  run_id: string;
  step_id: string;
  assistant_seq: number;
  call_index: number;
}

/** The call, or a non-retryable failure: an activity for a call the transcript does not hold has nothing to do. */
export async function recordedToolCall(db: Db, at: ToolCallAt): Promise<LlmToolCall> {
  const assistant = await getTranscriptEntry(db, at.run_id, at.step_id, at.assistant_seq);
  const call = assistant?.kind === 'assistant' ? assistant.tool_calls[at.call_index] : undefined;
  if (!call) {
    throw ApplicationFailure.nonRetryable(
      `tool call ${at.assistant_seq}/${at.call_index} is not in the transcript`,
      'internal',
    );
  }
  return call;
}

/** Where a call's result goes: the transcript entry at `seq`, in the model's turn `turn`. */
export interface ToolResultAt {
  run_id: string;
  step_id: string;
  seq: number;
  turn: number;
}

/** A call's result as the model will see it (already cut to the output limit). */
export interface ToolResult {
  output: JsonValue;
  is_error: boolean;
  error_code?: string | undefined;
  truncated: boolean;
  /** Answered from this recorded run's transcript (a replayed experiment item): no live call was made. */
  replayed_from_run_id?: string | undefined;
}

/**
 * Writes the call's result into the transcript as `attempt`, then its line in the event stream. A later attempt
 * having written it already fails non-retryably.
 */
export async function writeToolResult(
  db: Db,
  at: ToolResultAt,
  attempt: number,
  call: LlmToolCall,
  result: ToolResult,
): Promise<void> {
  const entry = {
    kind: 'tool' as const,
    turn: at.turn,
    call_id: call.id,
    name: call.name,
    args: call.args,
    output: result.output,
    is_error: result.is_error,
    ...(result.error_code !== undefined ? { error_code: result.error_code } : {}),
    truncated: result.truncated,
    ...(result.replayed_from_run_id !== undefined ? { replayed_from_run_id: result.replayed_from_run_id } : {}),
  };
  try {
    await putTranscriptEntry(db, { runId: at.run_id, stepId: at.step_id, seq: at.seq, attempt }, entry);
  } catch (err) {
    // A zombie attempt (Temporal already moved on): the accepted attempt's result stays.
    if (err instanceof TranscriptSupersededError) throw ApplicationFailure.nonRetryable(err.message, err.code);
    throw err;
  }
  await logAgentTurn(db, at.run_id, at.step_id, at.seq, {
    type: 'agent.tool_call',
    turn: at.turn,
    tool: call.name,
    ok: !result.is_error,
    summary: summarizeToolCall(call.args, result.output),
  });
}

const SUMMARY_CHARS = 200;

/** One line for the event stream: the arguments, then what came back (the transcript keeps both whole). */
function summarizeToolCall(args: JsonValue, output: JsonValue): string {
  const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
  const result = typeof output === 'string' ? output : JSON.stringify(output);
  return clip(`${clip(JSON.stringify(args) ?? '', 80)} → ${result}`, SUMMARY_CHARS);
}
