/**
 * The tool call a model asked for, as its turn's transcript entry holds it: what a tool activity (and an approval of
 * one) acts on, read by the (seq, index) the workflow passes instead of carrying the arguments through history.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { getTranscriptEntry } from '../../../db/transcripts';
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
