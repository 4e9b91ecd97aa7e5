/**
 * The first activity of a scheduled run (temporal/workflows/scheduled-run.ts): creates the run the one way runs are
 * created (shared/runs/create-run.ts), its snapshot built from the workflow and templates as they are now. A run that cannot start is still recorded — as failed, with a reason — so a schedule whose workflow was
 * deleted shows a failure per attempted run instead of failing silently. Idempotent by run id: a retry or a replay
 * answers from the stored document.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { insertRun, loadedSnapshot, newRunDoc, type RunDoc } from '../../db/runs';
import { recordRunOutcome } from '../../db/run-end';
import type { WorkflowDoc } from '../../db/workflows';
import { findWorkflowWithTemplates } from '../../db/workflow-with-templates';
import { runKindOf } from '../../shared/metrics/run-kind';
import type { WorkerMetrics } from '../metrics';
import { createRun, RunRefusedError, type PreparedRun } from '../../shared/runs/create-run';
import { buildSnapshot } from '../../shared/runs/snapshot';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import type { RunSnapshot } from '../../domain/run';
import type { ScheduledRunRefusal, ScheduledRunRequest, ScheduledRunVerdict } from '../../domain/schedule';
import { compileUserSchema, describeInputErrors, UserSchemaError } from '../../domain/user-schema';
import { isDuplicateKey } from '../../db/duplicate-key';

const REFUSALS: readonly string[] = [
  'workflow_invalid',
  'invalid_input',
  'too_large',
  'concurrent_runs_exceeded',
] satisfies ScheduledRunRefusal[];

function isRefusal(reason: string | undefined): reason is ScheduledRunRefusal {
  return reason !== undefined && REFUSALS.includes(reason);
}

type Refusal = { ok: false; reason: ScheduledRunRefusal; message: string };

/** A scheduled run that cannot be built (its workflow deleted or no longer valid, its input no longer valid). */
class Unbuildable extends Error {
  constructor(
    readonly reason: ScheduledRunRefusal,
    message: string,
    readonly workflow: WorkflowDoc | null,
  ) {
    super(message);
  }
}

export function createScheduledRunActivities(deps: { db: Db; config: Config; metrics: WorkerMetrics }) {
  /** Records the run as failed (with an empty snapshot when it has no record yet) and says so. */
  const refuse = async (req: ScheduledRunRequest, workflow: WorkflowDoc | null, refusal: Omit<Refusal, 'ok'>) => {
    const now = new Date();
    const stub: RunSnapshot = {
      run_id: req.run_id,
      workflow_id: req.workflow_id,
      workflow_name: workflow?.name ?? '(deleted workflow)',
      owner_id: req.owner_id,
      input: req.input,
      steps: [],
      created_at: now.toISOString(),
    };
    try {
      await insertRun(deps.db, ofExecution(req, newRunDoc({ snapshot: stub, ...placeOf(deps.config), now })));
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // recorded already: by a retry's first attempt, or admitted then refused
    }
    await recordRunOutcome(deps.db, req.run_id, {
      status: 'failed',
      error: { step_id: null, reason: refusal.reason, message: refusal.message },
    });
    return { ok: false, ...refusal } satisfies Refusal;
  };

  /** The snapshot from the workflow and templates as they are now, as a start through the API builds it. */
  const prepare = async (req: ScheduledRunRequest, now: Date): Promise<PreparedRun & { workflow: WorkflowDoc }> => {
    const found = await findWorkflowWithTemplates(deps.db, req.owner_id, req.workflow_id);
    if (!found) {
      const message = `the scheduled workflow ${req.workflow_id} no longer exists; delete or change schedule ${req.schedule_id}`;
      throw new Unbuildable('workflow_invalid', message, null);
    }
    const { workflow, templates } = found;
    const problems = inputProblems(workflow, req);
    if (problems.length > 0) {
      throw new Unbuildable('invalid_input', `the schedule's input: ${problems.join('; ')}`, workflow);
    }
    const maxDepth = deps.config.SUBWORKFLOW_MAX_DEPTH;
    const loaded = await loadSnapshotSources(deps.db, req.owner_id, workflow, maxDepth, templates);
    if (!loaded.ok) throw new Unbuildable('workflow_invalid', loaded.problem, workflow);
    const snapshot = buildSnapshot({
      runId: req.run_id,
      workflow,
      sources: loaded.sources,
      input: req.input,
      config: deps.config,
      now,
      // The literal URL was checked when the workflow was saved; the delivery checks resolved addresses each time.
      ...(workflow.config.callback_url !== undefined ? { callbackUrl: workflow.config.callback_url } : {}),
    });
    return { snapshot, workflow, adjust: (doc) => ofExecution(req, doc) };
  };

  return {
    async prepareScheduledRun(req: ScheduledRunRequest): Promise<ScheduledRunVerdict> {
      let workflow: WorkflowDoc | null = null;
      try {
        // The one way runs are created (shared/runs/create-run.ts), with the run id Temporal's schedule gave the
        // execution: a retry finds the record its first attempt wrote. No quota (the schedule's spec is its rate)
        // and no Temporal start (the schedule started it); a run the concurrent-runs limit refuses ends at once,
        // failed, rather than waiting for a slot: the schedule's next fire is the retry.
        const { doc, created } = await createRun(deps, {
          ownerId: req.owner_id,
          runId: req.run_id,
          prepare: async (_runId, now) => {
            const prepared = await prepare(req, now);
            workflow = prepared.workflow;
            return prepared;
          },
          onRefused: 'keep',
        });
        const reason = doc.error?.reason;
        if (doc.status === 'failed' && doc.error && isRefusal(reason)) {
          return { ok: false, reason, message: doc.error.message };
        }
        // Counted here, as the API counts the runs it starts, so that started minus finished stays the runs in
        // flight. A refused run is counted neither started nor finished; a retry that finds the run recorded does not
        // count it again (at most once: a crash between the write and this line loses one count rather than doubling).
        if (created) deps.metrics.runStarted(runKindOf(doc.snapshot.steps));
        // A new record holds the snapshot as built; one read back holds it in its stored form (schema keys escaped).
        return { ok: true, snapshot: created ? doc.snapshot : loadedSnapshot(doc) };
      } catch (err) {
        if (err instanceof Unbuildable) return refuse(req, err.workflow, { reason: err.reason, message: err.message });
        if (
          err instanceof RunRefusedError &&
          (err.reason === 'too_large' || err.reason === 'concurrent_runs_exceeded')
        ) {
          return refuse(req, workflow, { reason: err.reason, message: err.message });
        }
        throw err;
      }
    },
  };
}

const placeOf = (config: Config) => ({ namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE });

/** A scheduled run's record: its schedule, and the execution Temporal started for it (and that execution's deadline). */
function ofExecution(req: ScheduledRunRequest, doc: RunDoc): RunDoc {
  return {
    ...doc,
    schedule_id: req.schedule_id,
    deadline_at: req.deadline_at ? new Date(req.deadline_at) : null,
    temporal: { ...doc.temporal, run_id: req.temporal_run_id },
  };
}

function inputProblems(workflow: WorkflowDoc, req: ScheduledRunRequest): string[] {
  const schema = workflow.config.input_schema;
  if (!schema) return [];
  try {
    const validate = compileUserSchema(schema);
    return validate(req.input) ? [] : describeInputErrors(validate.errors);
  } catch (err) {
    return [err instanceof UserSchemaError ? err.message : 'the input schema does not compile'];
  }
}
