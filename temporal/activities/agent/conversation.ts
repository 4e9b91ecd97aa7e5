/**
 * The first part of a model call: the conversation the model is sent. A step's first call opens it (the setup entry and
 * the user's message, in one bulk write); a later call reads it back and adds a repair message when the last answer
 * did not fit `output_schema`. Everything here goes at once — the transcript writes, the owner's tokens today, and on a
 * retried attempt the step's start — so one database round trip waits before the call.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { Config } from '../../../config';
import { resolveOutputRefs } from '../../../db/blobs';
import { markStepRunning } from '../../../db/step-states';
import {
  putTranscriptEntries,
  putTranscriptEntry,
  readTranscript,
  type TranscriptEntry,
} from '../../../db/transcripts';
import { tokensUsedOn } from '../../../db/usage';
import { findUserMessage } from '../../../db/thread-messages';
import type { ThreadRef } from '../../../domain/thread';
import { readThreadContext, threadSystemText } from './thread-context';
import { NonRetryableError } from '../../failures';
import { buildRepairMessage, buildSystemPrompt, buildUserMessage, MAX_USER_MESSAGE_BYTES } from '../../llm/prompt';
import type { AgentSetup, CallModelInput } from './types';

export type SetupEntry = Extract<TranscriptEntry, { kind: 'setup' }>;

export interface Conversation {
  /** Every entry so far, the setup first. */
  history: TranscriptEntry[];
  setup: SetupEntry;
  /** The next free transcript seq (where the answer goes). */
  seq: number;
  /** A thread's turn: its earlier turns that fit the window, given to the model before `history` (not recorded). */
  context: TranscriptEntry[];
  /** A thread's turn: what follows the system prompt (memory, summary of older turns), not recorded; '' otherwise. */
  threadSystem: string;
  /** A thread's turn with a working memory: the model is given the update_memory tool. */
  memoryTool: boolean;
}

/** Opens or reads the conversation and checks the owner's daily token budget; throws what refuses the call. */
export async function buildConversation(
  deps: { db: Db; config: Config },
  req: CallModelInput,
  attempt: number,
): Promise<Conversation> {
  const key = { runId: req.run_id, stepId: req.step_id, seq: req.seq, attempt };
  const opening = req.setup ? openingEntries(deps.db, req.run_id, req.setup, req.thread) : undefined;
  const repair: TranscriptEntry | undefined =
    req.repair !== undefined ? { kind: 'user', text: buildRepairMessage(req.repair), repair: true } : undefined;
  // All at once; their verdicts are checked in the order they always were (the run's end first). The workflow
  // recorded the step's start; a retried attempt shows it is running again.
  const [live, usedToday, context, earlier] = await Promise.all([
    attempt > 1 ? markStepRunning(deps.db, req.run_id, req.step_id, attempt) : true,
    tokensUsedOn(deps.db, req.owner_id, new Date()),
    req.thread ? readThreadContext(deps.db, req.thread) : undefined,
    (async (): Promise<TranscriptEntry[] | { err: unknown }> => {
      try {
        if (opening) {
          const { setup, user } = await opening;
          if (user instanceof Error) {
            // The transcript still shows what the step was set up with.
            await putTranscriptEntry(deps.db, key, setup);
            throw user;
          }
          const entries = [setup, user];
          await putTranscriptEntries(deps.db, key, [...entries, ...(repair ? [repair] : [])]);
          return entries;
        }
        const [read] = await Promise.all([
          readTranscript(deps.db, req.run_id, req.step_id, req.seq),
          repair ? putTranscriptEntry(deps.db, key, repair) : undefined,
        ]);
        return read;
      } catch (err) {
        return { err };
      }
    })(),
  ]);
  if (!live) throw ApplicationFailure.nonRetryable('the run has already ended', 'run_ended');
  if (!Array.isArray(earlier)) throw earlier.err;
  const history = repair ? [...earlier, repair] : earlier;
  const setup = history[0];
  if (setup?.kind !== 'setup')
    throw ApplicationFailure.nonRetryable('the agent transcript has no setup entry', 'internal');
  assertDailyBudget(deps.config, usedToday);
  return {
    history,
    setup,
    seq: req.seq + (opening ? earlier.length : 0) + (repair ? 1 : 0),
    context: context?.entries ?? [],
    threadSystem: context ? threadSystemText(context) : '',
    memoryTool: context?.memory != null,
  };
}

/**
 * The setup entry and the user's message of a step's first call (the message needs the step's input, read from the
 * blob store when it holds references). An input too large for a message fails the step: its error instead.
 */
async function openingEntries(
  db: Db,
  runId: string,
  s: AgentSetup,
  thread: ThreadRef | undefined,
): Promise<{ setup: SetupEntry; user: TranscriptEntry | NonRetryableError }> {
  const setup: SetupEntry = {
    kind: 'setup',
    system: buildSystemPrompt({
      prompt: s.prompt,
      tasks: s.tasks,
      output_schema: s.output_schema ?? undefined,
      tools: s.tools,
      egress: s.egress,
    }),
    model: s.model,
    tools: s.tools,
    output_schema: s.output_schema,
    max_turns: s.max_turns,
    ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
    ...(s.max_output_tokens !== undefined ? { max_output_tokens: s.max_output_tokens } : {}),
    ...(s.egress !== undefined ? { egress: s.egress } : {}),
    ...(s.mcp_tools?.length ? { mcp_tools: s.mcp_tools } : {}),
    ...(s.mcp_problems?.length ? { mcp_problems: s.mcp_problems } : {}),
  };
  if (thread) {
    // The user's message as they wrote it, from the thread (the run's snapshot carries only the turn's number).
    const message = await findUserMessage(db, thread.id, thread.turn);
    if (!message?.text) return { setup, user: new NonRetryableError('invalid_input', 'the thread message is gone') };
    return { setup, user: { kind: 'user', text: message.text, repair: false } };
  }
  const text = buildUserMessage(await resolveOutputRefs(db, runId, s.input));
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_USER_MESSAGE_BYTES) {
    const problem = `the step input is ${bytes} bytes; an agent step takes at most ${MAX_USER_MESSAGE_BYTES}`;
    return { setup, user: new NonRetryableError('invalid_input', problem) };
  }
  return { setup, user: { kind: 'user', text, repair: false } };
}

/**
 * The user's tokens today (UTC), read before the call, must be below USER_MAX_TOKENS_PER_DAY. Calls in flight at once
 * may overshoot by their own usage; the next call after them is refused.
 */
export function assertDailyBudget(config: Config, used: number): void {
  const limit = config.USER_MAX_TOKENS_PER_DAY;
  if (used >= limit) {
    throw new NonRetryableError(
      'budget_exceeded',
      `daily token budget exceeded: USER_MAX_TOKENS_PER_DAY is ${limit} and ${used} tokens were used today (UTC)`,
    );
  }
}
