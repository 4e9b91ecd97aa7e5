/**
 * `callModel`: exactly one model call per activity attempt, in three parts — building the conversation from the
 * transcript in MongoDB (./conversation.ts), the call with SDK retries off (./model-call.ts), and recording what came
 * back (./record-call.ts). It returns only what the workflow needs to decide: tool call ids and names, usage, and the
 * final output (by reference when large). The step's start and end are the workflow's to record; this records the
 * turn. At most one database round trip waits before the call and two after it (docs/benchmarks.md, C2b).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Tracer } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import { setStepProgress } from '../../../db/step-states';
import { recordMcpProblems } from '../../../db/step-warnings';
import { TranscriptSupersededError, usageOf } from '../../../db/transcripts';
import { callOrigin, earlierCount } from '../../../db/usage';
import type { WorkerMetrics } from '../../metrics';
import { failStepAttempt } from '../step-failure';
import { buildConversation } from './conversation';
import { createOutputChecker } from './final-answer';
import { callTheModel } from './model-call';
import { recordCall, usageCallKey } from './record-call';
import type { CallModelInput, CallModelResult } from './types';

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

export function createCallModelActivity(deps: AgentActivityDeps) {
  const checker = createOutputChecker();
  // The SDK would print its call warnings as process warnings on stderr; they go to the structured log instead.
  (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

  return async function callModel(req: CallModelInput): Promise<CallModelResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const log = deps.logger.child({ run_id: req.run_id, step_id: req.step_id, turn: req.turn, attempt });
    const timer = setInterval(() => ctx.heartbeat(), AGENT_HEARTBEAT_MS);
    const started = performance.now();
    let attemptOutcome: 'completed' | 'failed' = 'failed';
    try {
      const conversation = await buildConversation(deps, req, attempt);
      // Sent with the call, not before it (awaited before the turn's own write): the status shows the turn in flight
      // and the usage of the calls before it while the model thinks, and which MCP tools the model is not shown.
      const mcpProblems = req.setup?.mcp_problems ?? [];
      const before = Promise.all([
        setStepProgress(deps.db, req.run_id, req.step_id, {
          turn: req.turn,
          usage: usageOf(conversation.history),
        }).catch((err: unknown) => log.warn({ err }, 'could not record agent progress')),
        mcpProblems.length > 0
          ? recordMcpProblems(deps.db, req.run_id, req.step_id, mcpProblems).catch((err: unknown) =>
              log.warn({ err }, 'could not record the MCP problems'),
            )
          : undefined,
      ]);
      // Also sent with the call: what the usage count needs after it (db/usage.ts) — where the call is made, and on a
      // retry what an earlier attempt counted.
      const callKey = usageCallKey(req, conversation.seq);
      const usage = {
        callKey,
        at: new Date(ctx.info.scheduledTimestampMs),
        origin: callOrigin(deps.db, req.run_id, req.step_id, req.thread?.id),
        earlier: earlierCount(deps.db, { ownerId: req.owner_id, callKey, attempt }),
      };
      // Settled, so a failed read is not an unhandled rejection while the model thinks; countCall rethrows it.
      void Promise.allSettled([usage.origin, usage.earlier]);
      const answer = await callTheModel(deps, req, { attempt, log, ctx }, conversation).catch(async (err: unknown) => {
        await before;
        throw err;
      });
      const outcome = await recordCall(
        { db: deps.db, checker },
        req,
        { attempt, log },
        conversation,
        answer,
        before,
        usage,
      );
      log.debug({ kind: outcome.kind, usage: outcome.usage }, 'model call done');
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
