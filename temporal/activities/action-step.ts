/**
 * One action step = one activity (`runActionStep`): it writes its own progress into the run projection (so the status
 * endpoint needs no Temporal call; the start only once the action has taken START_WRITE_DELAY_MS), resolves
 * large-output references, validates the rendered config in run mode, executes the action with an idempotency key
 * stable across retries, and stores a large output by reference.
 * Failures are classified once, by temporal/failures.ts.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Tracer } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../config';
import { resolveOutputRefs, storeOutput } from '../../db/blobs';
import { isRunLive } from '../../db/runs';
import { markStepCompleted, markStepRunning, recordStepDone } from '../../db/step-states';
import { runAction } from '../actions/run-action';
import type { ActionContext } from '../actions/types';
import type { JsonValue } from '../../domain/json';
import type { ActionStepRequest, ActionStepResult } from '../../domain/steps';
import { failStepAttempt } from './step-failure';
import type { ExpressionEvaluator } from '../expressions/evaluator';
import type { Mailer } from '../mail/mailer';
import type { WorkerMetrics } from '../metrics';
import { inSpan } from '../../shared/tracing';

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
/**
 * An attempt still at work after this long has its start written (the status shows it running); a quicker one is
 * written once, when it ends: half the writes for the quick HTTP calls and e-mails that make up most maps.
 */
export const START_WRITE_DELAY_MS = 200;

export function createActionStepActivity(deps: ActionStepDeps) {
  return {
    async runActionStep(req: ActionStepRequest): Promise<ActionStepResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const log = deps.logger.child({ run_id: req.run_id, step_id: req.step_id, attempt });
      // The projection is secondary to the run: while MongoDB is unreachable the step still runs (the reconciler
      // and the later writes catch the projection up) instead of burning the step's attempts on bookkeeping.
      const live = await isRunLive(deps.db, req.run_id).catch((err: unknown) => {
        log.warn({ err }, 'could not check the run');
        return true;
      });
      if (!live) {
        // The run already ended (cancelled while this attempt was queued): do not perform the side effect.
        throw ApplicationFailure.nonRetryable('the run has already ended', 'run_ended');
      }
      // The start is written only if the action is still at work after START_WRITE_DELAY_MS; a quicker attempt is
      // recorded once, start and end together. The first attempt also records what the step was given.
      const startedAt = new Date();
      const given = givenOf(req);
      let startWrite: Promise<unknown> | undefined;
      const writeStart = () =>
        (startWrite ??= markStepRunning(deps.db, req.run_id, req.step_id, attempt, {
          temporalRunId: ctx.info.workflowExecution?.runId,
          ...(attempt === 1 ? { input: given } : {}),
        }).catch((err: unknown) => log.warn({ err }, 'could not record step start')));
      const startTimer = setTimeout(() => void writeStart(), START_WRITE_DELAY_MS);
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      const started = performance.now();
      let outcome: 'completed' | 'failed' = 'failed';
      try {
        const output = await execute(deps, req, ctx);
        clearTimeout(startTimer);
        const stored = await storeOutput(deps.db, req.run_id, req.step_id, output);
        // The side effect has happened: a failed projection write must not make Temporal repeat it. The workflow
        // records the completion instead (a retried local activity), so the output is not lost with the write.
        const record = startWrite
          ? startWrite.then(() => markStepCompleted(deps.db, req.run_id, req.step_id, stored))
          : recordStepDone(deps.db, req.run_id, req.step_id, {
              attempt,
              startedAt,
              temporalRunId: ctx.info.workflowExecution?.runId,
              ...(attempt === 1 ? { input: given } : {}),
              output: stored,
            });
        const projected = await record.then(
          () => true,
          (err: unknown) => {
            log.warn({ err }, 'could not record step completion');
            return false;
          },
        );
        outcome = 'completed';
        return projected ? { output: stored } : { output: stored, projected: false };
      } catch (err) {
        // A failed attempt shows as started, then failed (or retrying).
        clearTimeout(startTimer);
        await writeStart();
        throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
      } finally {
        clearTimeout(startTimer);
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
