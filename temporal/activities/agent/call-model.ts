/**
 * `callModel`: exactly one model call per activity attempt. It rebuilds the conversation from the transcript in
 * MongoDB, calls the provider with SDK retries off, writes the assistant turn at the seq the workflow chose (a retry
 * overwrites it), reports progress into the runs projection, and returns only what the workflow needs to decide:
 * tool call ids and names, usage, and the final output (by reference when large). The answer's text goes to the run's
 * event stream as it is generated (live-text.ts), never into the activity's result.
 */
import type { McpToolDefinition } from '../../../domain/mcp';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Tracer } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import { resolveOutputRefs, storeOutput } from '../../../db/blobs';
import { markStepRunning, setStepProgress } from '../../../db/step-states';
import { appendRunEvents } from '../../../db/run-events';
import { recordMcpProblems } from '../../../db/step-warnings';
import { agentTurnEvent } from '../../../db/step-events';
import { addCallTokens, tokensUsedOn } from '../../../db/usage';
import {
  putTranscriptEntry,
  readTranscript,
  toLlmMessages,
  TranscriptSupersededError,
  usageOf,
  type TranscriptEntry,
} from '../../../db/transcripts';
import { NonRetryableError } from '../../failures';
import { failStepAttempt } from '../step-failure';
import { buildRepairMessage, buildSystemPrompt, buildUserMessage, MAX_USER_MESSAGE_BYTES } from '../../llm/prompt';
import { createLlmProvider } from '../../llm/provider';
import type { LlmToolCall, LlmToolSpec } from '../../llm/types';
import { getTool, toolParametersSchema } from '../../tools/registry';
import type { JsonObject } from '../../../domain/json';
import { createOutputChecker } from './final-answer';
import { openLiveText } from './live-text';
import type { CallModelInput, CallModelResult } from './types';
import type { WorkerMetrics } from '../../metrics';
import { inSpan } from '../../../shared/tracing';

export interface AgentActivityDeps {
  config: Config;
  db: Db;
  logger: Logger;
  metrics: WorkerMetrics;
  tracer?: Tracer;
}

/** Heartbeats carry cancellation to a waiting model call and reveal a dead worker well before the call's timeout. */
export const AGENT_HEARTBEAT_MS = 2_000;

/** Runs `fn`, heartbeating the current activity every AGENT_HEARTBEAT_MS until it settles. */
export function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), AGENT_HEARTBEAT_MS);
  return fn().finally(() => clearInterval(timer));
}

function toolSpecs(names: string[]): LlmToolSpec[] {
  return names.map((name) => {
    const tool = getTool(name);
    if (!tool) throw ApplicationFailure.nonRetryable(`tool "${name}" does not exist`, 'invalid_config');
    return { name: tool.name, description: tool.description, parameters: toolParametersSchema(tool) as JsonObject };
  });
}

/** MCP tools as listed for the step (their schemas are the servers' own). */
function mcpToolSpecs(tools: readonly McpToolDefinition[] | undefined): LlmToolSpec[] {
  return (tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }));
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

/**
 * The user's tokens today (UTC), read before the call, must be below USER_MAX_TOKENS_PER_DAY. Calls in flight at once
 * may overshoot by their own usage; the next call after them is refused.
 */
function assertDailyBudget(deps: AgentActivityDeps, used: number): void {
  const limit = deps.config.USER_MAX_TOKENS_PER_DAY;
  if (used >= limit) {
    throw new NonRetryableError(
      'budget_exceeded',
      `daily token budget exceeded: USER_MAX_TOKENS_PER_DAY is ${limit} and ${used} tokens were used today (UTC)`,
    );
  }
}

export function createCallModelActivity(deps: AgentActivityDeps) {
  const checker = createOutputChecker();
  // The SDK would print its call warnings as process warnings on stderr; they go to the structured log instead.
  (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

  return async function callModel(req: CallModelInput): Promise<CallModelResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const log = deps.logger.child({ run_id: req.run_id, step_id: req.step_id, turn: req.turn, attempt });
    const key = (seq: number) => ({ runId: req.run_id, stepId: req.step_id, seq, attempt });
    const timer = setInterval(() => ctx.heartbeat(), AGENT_HEARTBEAT_MS);
    const started = performance.now();
    let attemptOutcome: 'completed' | 'failed' = 'failed';
    try {
      let seq = req.seq;
      const written: TranscriptEntry[] = [];
      const put = (entry: TranscriptEntry) => {
        written.push(entry);
        return putTranscriptEntry(deps.db, key(seq++), entry);
      };
      // A step's first call opens its conversation: the setup entry, then the user's message (which needs the step's
      // input). Written alongside the start write and the reads, not after them: it depends on neither, and the call
      // still waits for it, so the transcript holds what was sent before anything is sent.
      const openConversation = async (s: NonNullable<CallModelInput['setup']>): Promise<void> => {
        const setupWritten = put({
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
        });
        const text = buildUserMessage(await resolveOutputRefs(deps.db, req.run_id, s.input));
        const bytes = Buffer.byteLength(text, 'utf8');
        if (bytes > MAX_USER_MESSAGE_BYTES) {
          await setupWritten;
          throw new NonRetryableError(
            'invalid_input',
            `the step input is ${bytes} bytes; an agent step takes at most ${MAX_USER_MESSAGE_BYTES}`,
          );
        }
        await Promise.all([setupWritten, put({ kind: 'user', text, repair: false })]);
      };
      // All at once; their verdicts are checked in the order they always were (the run's end first). The workflow
      // recorded the step's start; a retried attempt shows it is running again.
      const [live, usedToday, openingFailure] = await Promise.all([
        attempt > 1 ? markStepRunning(deps.db, req.run_id, req.step_id, attempt) : true,
        tokensUsedOn(deps.db, req.owner_id, new Date()),
        req.setup
          ? openConversation(req.setup).then(
              () => null,
              (err: unknown) => ({ err }),
            )
          : null,
      ]);
      if (!live) throw ApplicationFailure.nonRetryable('the run has already ended', 'run_ended');
      if (openingFailure) throw openingFailure.err;
      // Once the step shows running: its status and event log say which MCP tools the model will not be shown, and why.
      const mcpProblems = req.setup?.mcp_problems ?? [];
      if (mcpProblems.length > 0) await recordMcpProblems(deps.db, req.run_id, req.step_id, mcpProblems);
      if (req.repair !== undefined) await put({ kind: 'user', text: buildRepairMessage(req.repair), repair: true });

      // A step's first call has just written the whole conversation so far: no need to read it back.
      const history: TranscriptEntry[] =
        req.setup && req.seq === 0 ? written : await readTranscript(deps.db, req.run_id, req.step_id, seq);
      const setup = history[0];
      if (setup?.kind !== 'setup')
        throw ApplicationFailure.nonRetryable('the agent transcript has no setup entry', 'internal');

      if (usedToday !== null) assertDailyBudget(deps, usedToday);
      const provider = createLlmProvider(deps.config, setup.model, { timeoutMs: req.timeout_ms });
      // The status shows the turn in flight (and the usage of the calls before it) while the model thinks; the write
      // goes on during the call, and is awaited before the write of this call's own progress.
      const progressBefore = setStepProgress(deps.db, req.run_id, req.step_id, {
        turn: req.turn,
        usage: usageOf(history),
      }).then(
        () => undefined,
        (err: unknown) => log.warn({ err }, 'could not record agent progress'),
      );
      const ref = provider.ref;
      const liveText = openLiveText(
        { db: deps.db, log, retentionMs: deps.config.STREAM_DELTAS_RETENTION_HOURS * 3_600_000 },
        { runId: req.run_id, execId: req.step_id, turn: req.turn, attempt },
      );
      const callStarted = performance.now();
      const generate = () =>
        provider.generate({
          system: setup.system,
          messages: toLlmMessages(history),
          tools: [...toolSpecs(setup.tools), ...mcpToolSpecs(setup.mcp_tools)],
          temperature: setup.temperature,
          maxOutputTokens: setup.max_output_tokens,
          signal: ctx.cancellationSignal,
          onText: (text) => liveText.push(text),
        });
      const spanAttributes = { 'gen_ai.system': ref.provider, 'gen_ai.request.model': ref.name, turn: req.turn };
      const result = await inSpan(deps.tracer, `model ${ref.provider}:${ref.name}`, spanAttributes, generate).catch(
        async (err: unknown) => {
          deps.metrics.modelCall(ref.provider, ref.name, false, (performance.now() - callStarted) / 1000);
          await Promise.all([progressBefore, liveText.abandon()]);
          throw err;
        },
      );
      // The rest of the live text goes with the turn's event, ahead of it, in the step write below. finish() never
      // rejects.
      const liveTail = liveText.finish();
      deps.metrics.modelCall(ref.provider, ref.name, true, (performance.now() - callStarted) / 1000, result.usage);

      if (result.warnings.length > 0) log.info({ warnings: result.warnings }, 'model call warnings');
      const assistantSeq = seq++;
      const toolCalls = uniqueCallIds(result.toolCalls, assistantSeq);
      const base = { next_seq: seq, usage: result.usage };
      let outcome: CallModelResult;
      let final = false;
      if (toolCalls.length > 0) {
        outcome = {
          ...base,
          kind: 'tool_calls',
          assistant_seq: assistantSeq,
          calls: toolCalls.map((c) => ({ id: c.id, name: c.name })),
        };
      } else {
        const answer = checker.check(result.text, setup.output_schema);
        if (answer.ok) {
          final = true;
          outcome = {
            ...base,
            kind: 'final',
            output: await storeOutput(deps.db, req.run_id, req.step_id, answer.output),
          };
        } else {
          outcome = { ...base, kind: 'invalid_output', problem: answer.problem };
        }
      }
      const entry: TranscriptEntry = {
        kind: 'assistant',
        turn: req.turn,
        text: result.text,
        tool_calls: toolCalls,
        usage: result.usage,
        finish_reason: result.finishReason,
        final,
      };
      const tokens = result.usage.input_tokens + result.usage.output_tokens;
      const [tail] = await Promise.all([
        liveTail,
        progressBefore,
        putTranscriptEntry(deps.db, key(assistantSeq), entry),
        // Keyed by the transcript seq of this answer: every attempt of the same call has the same key.
        addCallTokens(deps.db, {
          ownerId: req.owner_id,
          callKey: `${req.run_id}:${req.step_id}:${assistantSeq}`,
          tokens,
          at: new Date(),
        }),
      ]);
      // The call's event goes with the step write that follows (their seqs allocated by that write), after the entry
      // it announces: a reader of the event finds the entry. When that write fails, the event is logged on its own.
      const turnEvent = agentTurnEvent(req.step_id, assistantSeq, {
        type: 'agent.model_call',
        turn: req.turn,
        usage: result.usage,
        tool_calls: toolCalls.length,
        final,
      });
      const events = [...tail, turnEvent];
      const logTurnAlone = () => appendRunEvents(deps.db, req.run_id, events);
      // The call has happened: a failed progress write must not make Temporal repeat it (only a failed event may).
      const progress = { turn: req.turn, usage: usageOf([...history, entry]) };
      await setStepProgress(deps.db, req.run_id, req.step_id, progress, events).catch(async (err: unknown) => {
        log.warn({ err }, 'could not record agent progress');
        await logTurnAlone();
      });
      log.debug({ kind: outcome.kind, usage: result.usage }, 'model call done');
      attemptOutcome = 'completed';
      return outcome;
    } catch (err) {
      // A zombie attempt (Temporal already moved on): leave the status to the attempt that counts.
      if (err instanceof TranscriptSupersededError) throw ApplicationFailure.nonRetryable(err.message, err.code);
      throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
    } finally {
      clearInterval(timer);
      deps.metrics.stepAttempt('agent', 'none', attemptOutcome, (performance.now() - started) / 1000);
    }
  };
}
