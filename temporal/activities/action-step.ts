/**
 * One action step = one activity (`runActionStep`): it writes its own progress into the run projection (so the status
 * endpoint needs no Temporal call), resolves large-output references, validates the rendered config in run mode,
 * executes the action with an idempotency key stable across retries, and stores a large output by reference.
 * Failures are classified once, by temporal/failures.ts.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Tracer } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { resolveOutputRefs, storeOutput } from '../../db/blobs';
import { markStepCompleted, markStepRunning } from '../../db/step-states';
import { runAction } from '../actions/run-action';
import type { ActionContext } from '../actions/types';
import type { JsonValue } from '../contract/json';
import type { ActionStepRequest, ActionStepResult } from '../contract/steps';
import { failStepAttempt } from './step-failure';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { Mailer } from '../mail/mailer';
import type { WorkerMetrics } from '../../runtime/metrics/worker-metrics';
import { inSpan } from '../../runtime/tracing';

export interface ActionStepDeps {
  config: Config;
  db: Db;
  logger: Logger;
  mailer: Mailer;
  expressions: ExpressionEvaluator;
  metrics: WorkerMetrics;
  tracer?: Tracer;
}

/** Heartbeat period: well inside the workflow's heartbeat timeout (≤ 10 s). */
const HEARTBEAT_EVERY_MS = 2_000;
export function createActionStepActivity(deps: ActionStepDeps) {
  return {
    async runActionStep(req: ActionStepRequest): Promise<ActionStepResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const log = deps.logger.child({ run_id: req.run_id, step_id: req.step_id, attempt });
      // The attempt's start, conditional on the run not having ended: a run cancelled while this attempt was queued
      // gets no side effect. The projection is secondary to the run: while MongoDB is unreachable the step still runs
      // (the later writes and the reconciler catch the projection up) instead of burning its attempts on bookkeeping.
      const live = await markStepRunning(deps.db, req.run_id, req.step_id, attempt, {
        ...(attempt === 1 ? { input: givenOf(req) } : {}),
      }).catch((err: unknown) => {
        log.warn({ err }, 'could not record step start');
        return true;
      });
      if (!live) throw ApplicationFailure.nonRetryable('the run has already ended', 'run_ended');
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const started = performance.now();
      let outcome: 'completed' | 'failed' = 'failed';
      try {
        const output = await execute(deps, req, ctx);
        const stored = await storeOutput(deps.db, req.run_id, req.step_id, output);
        // The side effect has happened: a failed projection write must not make Temporal repeat it. The workflow
        // records the completion instead (a retried local activity), so the output is not lost with the write.
        const projected = await markStepCompleted(deps.db, req.run_id, req.step_id, stored).then(
          () => true,
          (err: unknown) => {
            log.warn({ err }, 'could not record step completion');
            return false;
          },
        );
        outcome = 'completed';
        return projected ? { output: stored } : { output: stored, projected: false };
      } catch (err) {
        throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
      } finally {
        clearInterval(timer);
        deps.metrics.stepAttempt('action', req.action_type, outcome, (performance.now() - started) / 1000);
      }
    },
  };
}

/** Resolves references, validates and performs the action (shared with pure steps, which do not heartbeat). */
export async function execute(
  deps: ActionStepDeps,
  req: ActionStepRequest,
  ctx: Context,
  heartbeat: () => void = () => ctx.heartbeat(),
): Promise<JsonValue> {
  const rendered = await resolveOutputRefs(deps.db, req.run_id, req.config);
  const actionCtx: ActionContext = {
    config: deps.config,
    mailer: deps.mailer,
    expressions: deps.expressions,
    runId: req.run_id,
    stepId: req.step_id,
    idempotencyKey: `${req.run_id}:${req.step_id}`,
    signal: ctx.cancellationSignal,
    heartbeat,
  };
  // Validates the rendered config in run mode (strict, defaults filled) and executes; failures are StepErrors.
  const run = () => runAction(req.action_type, rendered, actionCtx);
  return toJson(await inSpan(deps.tracer, `action ${req.action_type}`, { action_type: req.action_type }, run));
}

/** What a step was given, as its status shows it: the rendered config, with the rendered input when it has one. */
export function givenOf(req: ActionStepRequest): JsonValue {
  return req.input === null ? req.config : { config: req.config, input: req.input };
}

/** Action outputs are plain JSON by their output schemas; this drops `undefined` fields the same way JSON does. */
function toJson(value: unknown): JsonValue {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JsonValue);
}
