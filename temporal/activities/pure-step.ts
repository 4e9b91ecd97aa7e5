/**
 * A pure step (`transform`) runs as a **local activity**: it computes a value from earlier outputs and touches nothing
 * outside, so it needs none of what a regular activity pays for — no task queue round trip through the Temporal
 * server, no heartbeats, no separate `running` write (a pure step is done in milliseconds; its start, input and
 * completion are written together, db/step-states.ts recordStepDone). The expression still runs in an evaluator process
 * (temporal/expressions/): a runaway expression cannot stall the worker. Its result is recorded in the run's history
 * as a marker, so a replay never evaluates it again; a worker crash before that evaluates it again (harmless: pure).

 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { storeOutput } from '../../db/blobs';
import { markStepRunning, recordStepDone } from '../../db/step-states';
import type { JsonValue } from '../../domain/json';
import type { OutputRef } from '../../domain/run';
import type { ActionStepRequest, ActionStepResult } from '../../domain/steps';
import { execute, givenOf, type ActionStepDeps } from './action-step';
import { failStepAttempt } from './step-failure';

export function createPureStepActivity(deps: ActionStepDeps) {
  /** A recorded completion's answer: without the write the workflow records the completion itself, as for any step. */
  const answer = (output: JsonValue | OutputRef, projected: boolean): ActionStepResult =>
    projected ? { output } : { output, projected: false };
  const unrecorded = (log: Logger, what: string) => (err: unknown) => {
    log.warn({ err }, what);
    return false;
  };

  return {
    async runPureStep(req: ActionStepRequest): Promise<ActionStepResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const startedAt = new Date();
      const log = deps.logger.child({ run_id: req.run_id, step_id: req.step_id, attempt });
      const started = performance.now();
      let outcome: 'completed' | 'failed' = 'failed';
      try {
        const result = await run();
        outcome = 'completed';
        return result;
      } finally {
        deps.metrics.stepAttempt('action', req.action_type, outcome, (performance.now() - started) / 1000);
      }

      // The attempt itself, timed above.
      async function run(): Promise<ActionStepResult> {
        let output: JsonValue;
        try {
          output = await execute(deps, req, ctx, () => undefined);
        } catch (err) {
          // A failed attempt shows as started, then failed (or retrying), like any step's.
          await markStepRunning(deps.db, req.run_id, req.step_id, attempt, {
            temporalRunId: ctx.info.workflowExecution?.runId,
            ...(attempt === 1 ? { input: givenOf(req) } : {}),
          }).catch((e: unknown) => log.warn({ err: e }, 'could not record step start'));
          throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
        }
        try {
          const stored = await storeOutput(deps.db, req.run_id, req.step_id, output);
          const projected = await recordStepDone(deps.db, req.run_id, req.step_id, {
            attempt,
            startedAt,
            temporalRunId: ctx.info.workflowExecution?.runId,
            ...(attempt === 1 ? { input: givenOf(req) } : {}),
            output: stored,
          }).then(() => true, unrecorded(log, 'could not record the step'));
          return answer(stored, projected);
        } catch (err) {
          throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
        }
      }
    },
  };
}
