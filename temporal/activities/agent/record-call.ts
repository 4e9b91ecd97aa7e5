/**
 * The third part of a model call: recording what came back. The answer decides the outcome (tool calls, a final
 * answer, or one that does not fit `output_schema`); its transcript entry, the usage count's add, a large final
 * answer's blob and the step's turn write go together, and the call's events follow once they have landed, beside the
 * usage count's call document — two database round trips in sequence after the call. A failed turn write does not make
 * Temporal repeat the call (only a failed transcript or usage write may).
 */
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { storeOutput } from '../../../db/blobs';
import type { NewRunEvent } from '../../../db/run-events';
import { agentTurnEvent } from '../../../db/step-events';
import { recordTurn } from '../../../db/step-states';
import { putTranscriptEntry, usageOf, type TranscriptEntry } from '../../../db/transcripts';
import { countCall, type CallOrigin, type UsageCallDoc } from '../../../db/usage';
import type { LlmToolCall } from '../../llm/types';
import type { Conversation } from './conversation';
import type { createOutputChecker } from './final-answer';
import type { ModelAnswer } from './model-call';
import type { CallModelInput, CallModelResult } from './types';

/** What the usage count of a call needs, read while the model thought (call-model.ts). */
export interface UsageContext {
  callKey: string;
  /** When the call's activity was first scheduled: the day it counts on. */
  at: Date;
  origin: Promise<CallOrigin>;
  earlier: Promise<UsageCallDoc | null>;
}

/** The call's usage key: the transcript seq of its answer, so every attempt of the same call has the same key. */
export function usageCallKey(req: CallModelInput, assistantSeq: number): string {
  return `${req.run_id}:${req.step_id}:${assistantSeq}`;
}

/** Records the answer and returns what the workflow needs to decide. `before`: writes still in flight from before. */
export async function recordCall(
  deps: { db: Db; checker: ReturnType<typeof createOutputChecker> },
  req: CallModelInput,
  at: { attempt: number; log: Logger },
  conversation: Conversation,
  answer: ModelAnswer,
  before: Promise<unknown>,
  usage: UsageContext,
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
  const [tail, , origin] = await Promise.all([answer.liveTail, before, usage.origin]);
  const stored = checked?.ok ? storeOutput(deps.db, req.run_id, req.step_id, checked.output) : undefined;
  const written = Promise.all([
    putTranscriptEntry(
      deps.db,
      { runId: req.run_id, stepId: req.step_id, seq: assistantSeq, attempt: at.attempt },
      entry,
    ),
    stored,
  ]);
  // Its add goes beside the entry, its call document beside the events (db/usage.ts).
  const counted = countCall(
    deps.db,
    {
      ownerId: req.owner_id,
      callKey: usage.callKey,
      at: usage.at,
      model: conversation.setup.model,
      origin,
      input_tokens: result.usage.input_tokens,
      output_tokens: result.usage.output_tokens,
    },
    usage.earlier,
  );
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
  const [{ failed }] = await Promise.all([
    recordTurn(deps.db, req.run_id, req.step_id, progress, events, written),
    counted,
  ]);
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
