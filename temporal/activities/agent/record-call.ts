/**
 * The third part of a model call: recording what came back. The answer decides the outcome (tool calls, a final
 * answer, or one that does not fit `output_schema`); its transcript entry, the owner's usage count, a large final
 * answer's blob and the step's turn write go together, and the call's events follow once they have landed — two
 * database round trips in sequence after the call. A failed turn write does not make Temporal repeat the call (only a
 * failed transcript or usage write may).
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { storeOutput } from '../../../db/blobs';
import type { NewRunEvent } from '../../../db/run-events';
import { agentTurnEvent } from '../../../db/step-events';
import { recordTurn } from '../../../db/step-states';
import { putTranscriptEntry, usageOf, type TranscriptEntry } from '../../../db/transcripts';
import { addCallTokens } from '../../../db/usage';
import type { LlmToolCall } from '../../llm/types';
import type { Conversation } from './conversation';
import type { createOutputChecker } from './final-answer';
import type { ModelAnswer } from './model-call';
import type { CallModelInput, CallModelResult } from './types';

/** Records the answer and returns what the workflow needs to decide. `before`: writes still in flight from before. */
export async function recordCall(
  deps: { db: Db; checker: ReturnType<typeof createOutputChecker> },
  req: CallModelInput,
  at: { attempt: number; log: Logger },
  conversation: Conversation,
  answer: ModelAnswer,
  before: Promise<unknown>,
): Promise<CallModelResult> {
  const { result } = answer;
  const assistantSeq = conversation.seq;
  const toolCalls = uniqueCallIds(result.toolCalls, assistantSeq);
  const base = { next_seq: assistantSeq + 1, usage: result.usage };
  const checked = toolCalls.length > 0 ? undefined : deps.checker.check(result.text, conversation.setup.output_schema);
  const final = checked?.ok === true;
  const entry: TranscriptEntry = {
    kind: 'assistant',
    turn: req.turn,
    text: result.text,
    tool_calls: toolCalls,
    usage: result.usage,
    finish_reason: result.finishReason,
    final,
  };
  const [tail] = await Promise.all([answer.liveTail, before]);
  const stored = checked?.ok ? storeOutput(deps.db, req.run_id, req.step_id, checked.output) : undefined;
  const written = Promise.all([
    putTranscriptEntry(
      deps.db,
      { runId: req.run_id, stepId: req.step_id, seq: assistantSeq, attempt: at.attempt },
      entry,
    ),
    // Keyed by the transcript seq of this answer: every attempt of the same call has the same key.
    addCallTokens(deps.db, {
      ownerId: req.owner_id,
      callKey: `${req.run_id}:${req.step_id}:${assistantSeq}`,
      tokens: result.usage.input_tokens + result.usage.output_tokens,
      at: new Date(),
    }),
    stored,
  ]);
  const events: NewRunEvent[] = [
    ...tail,
    agentTurnEvent(req.step_id, assistantSeq, {
      type: 'agent.model_call',
      turn: req.turn,
      usage: result.usage,
      tool_calls: toolCalls.length,
      final,
    }),
  ];
  const progress = { turn: req.turn, usage: usageOf([...conversation.history, entry]) };
  const { failed } = await recordTurn(deps.db, req.run_id, req.step_id, progress, events, written);
  if (failed !== undefined) at.log.warn({ err: failed }, 'could not record agent progress');

  if (toolCalls.length > 0) {
    return {
      ...base,
      kind: 'tool_calls',
      assistant_seq: assistantSeq,
      calls: toolCalls.map((c) => ({ id: c.id, name: c.name })),
    };
  }
  if (checked?.ok) return { ...base, kind: 'final', output: (await stored)! };
  return { ...base, kind: 'invalid_output', problem: checked?.ok === false ? checked.problem : 'no answer' };
}

/** Some OpenAI-compatible servers send empty or repeated call ids; results are matched to calls by id, so make them unique. */
function uniqueCallIds(calls: LlmToolCall[], assistantSeq: number): LlmToolCall[] {
  const seen = new Set<string>();
  return calls.map((call, i) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${assistantSeq}_${i}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}
