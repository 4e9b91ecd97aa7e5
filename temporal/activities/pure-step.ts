/**
 * A pure step (`transform`) runs as a **local activity**: it computes a value from earlier outputs and touches nothing
 * outside, so it needs none of what a regular activity pays for — no task queue round trip through the Temporal
 * server, no heartbeats, no separate `running` write (a pure step is done in milliseconds; its start, input and
 * completion are written together, db/runs.ts recordPureStep). The expression still runs in an evaluator process
 * (temporal/expressions/): a runaway expression cannot stall the worker. Its result is recorded in the run's history
 * as a marker, so a replay never evaluates it again; a worker crash before that evaluates it again (harmless: pure).
 *
 * A line of pure steps (each waiting only for the ones before it, or for steps already done) goes to one local
 * activity, runPureLine: one activation and one marker instead of one per step. Each step is still rendered,
 * evaluated and recorded on its own, in line order, exactly as runPureStep would; the line stops at the first step
 * that cannot be rendered or evaluated, without recording anything for it, and the workflow runs that step alone.
 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { storeOutput } from '../../db/blobs';
import { markStepRunning, recordPureStep } from '../../db/runs';
import type { JsonValue } from '../contract/json';
import { render } from '../contract/render';
import type { StepStatus } from '../contract/run';
import type { ActionStepRequest, ActionStepResult, PureLineRequest, PureLineResult } from '../contract/steps';
import { execute, type ActionStepDeps } from './action-step';
import { failStepAttempt } from './step-failure';

export function createPureStepActivity(deps: ActionStepDeps) {
  /** Records a pure step that completed (start, input and output in one write); false when the write failed. */
  const record = (req: ActionStepRequest, attempt: number, startedAt: Date, output: JsonValue, log: Logger) =>
    storeOutput(deps.db, req.run_id, req.step_id, output).then(async (stored) => {
      const given = req.input === null ? req.config : { config: req.config, input: req.input };
      const projected = await recordPureStep(deps.db, req.run_id, req.step_id, {
        attempt,
        startedAt,
        ...(attempt === 1 ? { input: given } : {}),
        output: stored,
      }).then(
        () => true,
        (err: unknown) => {
          log.warn({ err }, 'could not record the step');
          return false;
        },
      );
      // Without the write the workflow records the completion itself (a retried projection write), as for any step.
      return projected ? { output: stored } : { output: stored, projected: false as const };
    });

  return {
    async runPureLine(req: PureLineRequest): Promise<PureLineResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const steps = { ...req.ctx.steps };
      const statuses: Record<string, StepStatus> = { ...req.ctx.statuses };
      const completed: ActionStepResult[] = [];
      for (const step of req.steps) {
        const startedAt = new Date();
        const started = performance.now();
        const log = deps.logger.child({ run_id: req.run_id, step_id: step.step_id, attempt });
        let result: ActionStepResult;
        try {
          const rendered = { ...req.ctx, steps, statuses };
          const one: ActionStepRequest = {
            run_id: req.run_id,
            step_id: step.step_id,
            action_type: step.action_type,
            config: render(step.config, rendered) as ActionStepRequest['config'],
            input: render(step.input, rendered),
            max_attempts: 1,
          };
          result = await record(one, attempt, startedAt, await execute(deps, one, ctx, () => undefined), log);
        } catch {
          // Not recorded: the workflow runs this step on its own, and its failure is reported there.
          break;
        }
        deps.metrics.stepAttempt('action', step.action_type, 'completed', (performance.now() - started) / 1000);
        completed.push(result);
        steps[step.step_id] = result.output;
        statuses[step.step_id] = 'completed';
      }
      return { completed };
    },

    async runPureStep(req: ActionStepRequest): Promise<ActionStepResult> {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      const startedAt = new Date();
      const given = req.input === null ? req.config : { config: req.config, input: req.input };
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
          await markStepRunning(deps.db, req.run_id, req.step_id, attempt, attempt === 1 ? { input: given } : {}).catch(
            (e: unknown) => log.warn({ err: e }, 'could not record step start'),
          );
          throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
        }
        try {
          return await record(req, attempt, startedAt, output, log);
        } catch (err) {
          throw await failStepAttempt({ db: deps.db, log, metrics: deps.metrics }, req, attempt, err);
        }
      }
    },
  };
}
