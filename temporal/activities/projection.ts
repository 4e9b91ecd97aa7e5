/**
 * Projection writes the run workflow makes as local activities (steps it performs itself, the graph's own events,
 * the run's outcome) and the start of a sub-workflow's run document. Idempotent: a replayed or retried write leaves
 * the same document.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { finishTurn } from '../../shared/threads/end-turn';
import type { Config } from '../../config';
import { resolveOutputRefs, storeOutput } from '../../db/blobs';
import { insertRun, newRunDoc } from '../../db/runs';
import {
  markStepCompleted,
  markStepFailed,
  markStepRunning,
  markStepSkipped,
  recordStepInput,
  setChildRun,
} from '../../db/step-states';
import { markStepWaiting } from '../../db/step-waits';
import { recordRunEnd, type EndedRun } from '../../db/run-end';
import { runKindOf } from '../../shared/metrics/run-kind';
import type { WorkerMetrics } from '../metrics';
import type { JsonValue } from '../../domain/json';
import { isOutputRef, type OutputRef } from '../../domain/run';
import type { ChildRunRequest, ChildRunVerdict, OutcomeRequest, RunOutcome, StepProjection } from '../../domain/steps';
import { compileUserSchema, describeInputErrors, UserSchemaError } from '../../domain/user-schema';
import { isDuplicateKey } from '../../db/duplicate-key';

/** The blob key of a run's whole outputs map: not a valid execution id, so it never meets a step's blob. */
const RUN_OUTPUTS_KEY = '*outputs';

/**
 * Counts a run's end, from the document its terminal write returned (no read of its own): the run itself when it is
 * top-level, and the step attempts of its `delay` and `approval` steps, sub-workflow runs included.
 */
function countRunFinished(metrics: WorkerMetrics, run: EndedRun): void {
  countBuiltinAttempts(metrics, run);
  if (run.parent_run_id) return;
  const seconds = run.completed_at ? (run.completed_at.getTime() - run.created_at.getTime()) / 1000 : null;
  metrics.runFinished(runKindOf(run.steps), run.status, run.error?.reason ?? 'none', seconds);
}

/**
 * `delay` and `approval` run in the workflow itself, with no activity to count their attempt: each is counted once,
 * from its stored start and end, by the write that ends the run (one place, no extra command per step). A map's
 * items or a loop's iterations of one of them count as the one step; a step a rerun reused did not run here.
 */
function countBuiltinAttempts(metrics: WorkerMetrics, run: EndedRun): void {
  for (const step of run.steps) {
    if (step.action_type !== 'delay' && step.action_type !== 'approval') continue;
    if ((step.status !== 'completed' && step.status !== 'failed') || step.reused_from_run_id) continue;
    // A step refused before it started (an invalid rendered config) failed in no time.
    const seconds =
      step.started_at && step.completed_at ? (step.completed_at.getTime() - step.started_at.getTime()) / 1000 : 0;
    metrics.stepAttempt('action', step.action_type, step.status, seconds);
  }
}

/**
 * Records the run's end; counted by the write that turned the run terminal (a retried write records nothing). A
 * thread's turn then ends in its thread and the next queued message starts (shared/threads/end-turn.ts): on the
 * first write when the run is a turn, and on a retried one (which does not know) whatever the run is.
 */
export async function endRun(deps: ProjectionDeps, runId: string, outcome: RunOutcome, temporalRunId?: string) {
  const ended = await recordRunEnd(deps.db, runId, outcome, new Date(), temporalRunId);
  if (ended) countRunFinished(deps.metrics, ended);
  if (ended === null || ended.thread_id) await finishTurn(deps, runId);
}

interface ProjectionDeps {
  db: Db;
  config: Config;
  metrics: WorkerMetrics;
  temporal?: Client;
}

/**
 * Temporal's run id of the workflow this (local) activity works for: the run's record learns it from the worker's
 * first write that moves the run to `running` or ends it, not from the API after the start (db/runs.ts).
 */
function workflowRunId(): string | undefined {
  return Context.current().info.workflowExecution?.runId;
}

export function createProjectionActivities(deps: ProjectionDeps) {
  return {
    /** Returns the output as stored for `completed` (by reference when large), else null. */
    async projectStep({ run_id, step_id, event }: StepProjection): Promise<JsonValue | OutputRef | null> {
      switch (event.kind) {
        case 'running':
          await markStepRunning(deps.db, run_id, step_id, 1, {
            temporalRunId: workflowRunId(),
            ...(event.items !== undefined ? { itemsTotal: event.items } : {}),
            ...(event.input !== undefined ? { input: event.input } : {}),
          });
          return null;
        case 'waiting':
          if (event.input !== undefined) await recordStepInput(deps.db, run_id, step_id, event.input);
          await markStepWaiting(deps.db, run_id, step_id, event.approval);
          return null;
        case 'completed': {
          // A map's list may hold references to large item outputs: stored again as one value, it must hold the
          // values (a stored blob's content is data, never resolved again).
          const stored = isOutputRef(event.output)
            ? event.output
            : await storeOutput(deps.db, run_id, step_id, await resolveOutputRefs(deps.db, run_id, event.output));
          await markStepCompleted(deps.db, run_id, step_id, stored, event.usage, event.turns);
          return stored;
        }
        case 'skipped':
          await markStepSkipped(deps.db, run_id, step_id, event.reason);
          return null;
        case 'failed':
          await markStepFailed(deps.db, run_id, step_id, event.error, {
            final: true,
            ...(event.usage ? { usage: event.usage } : {}),
            ...(event.output !== undefined ? { output: event.output } : {}),
          });
          return null;
        case 'child':
          await setChildRun(deps.db, run_id, step_id, event.child_run_id, event.temporal_run_id);
          return null;
      }
    },
    /** The length of a list stored by reference (a map over a large output), or null when it is not a list. */
    async listLength({ run_id, ref }: { run_id: string; ref: OutputRef }): Promise<number | null> {
      const value = await resolveOutputRefs(deps.db, run_id, ref);
      return Array.isArray(value) ? value.length : null;
    },
    /** A sub-workflow's outputs too large for its result, stored for the parent (who may read its children's blobs). */
    async storeRunOutputs({ run_id, outputs }: { run_id: string; outputs: Record<string, JsonValue | OutputRef> }) {
      const resolved = await resolveOutputRefs(deps.db, run_id, outputs);
      const stored = await storeOutput(deps.db, run_id, RUN_OUTPUTS_KEY, resolved, { force: true });
      return stored as OutputRef;
    },
    async recordOutcome({ run_id, outcome }: OutcomeRequest): Promise<void> {
      await endRun(deps, run_id, outcome, workflowRunId());
    },
    /**
     * Before a sub-workflow starts: checks the rendered input against the sub-workflow's input schema and records
     * the child's run document (status queued), so the status read answers for the child id as for any run.
     */
    async prepareChildRun({ snapshot, input_schema }: ChildRunRequest): Promise<ChildRunVerdict> {
      if (input_schema) {
        let problems: string[];
        try {
          const validate = compileUserSchema(input_schema);
          problems = validate(snapshot.input) ? [] : describeInputErrors(validate.errors);
        } catch (err) {
          problems = [err instanceof UserSchemaError ? err.message : 'the input schema does not compile'];
        }
        if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
      }
      const doc = newRunDoc({
        snapshot: snapshot,
        namespace: deps.config.TEMPORAL_NAMESPACE,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      });
      try {
        await insertRun(deps.db, doc);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // a retry of this activity, or a replay: the document exists
      }
      return { ok: true };
    },
  };
}
