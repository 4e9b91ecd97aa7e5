/**
 * The first activity of a scheduled run (temporal/workflows/scheduled-run.ts): builds the snapshot from the workflow
 * and templates as they are now, exactly as a start through the API does (shared/runs/), and records the run
 * document. A run that cannot start is still recorded — as failed, with a reason — so a schedule whose workflow was
 * deleted shows a failure per attempted run instead of failing silently. Idempotent by run id: a retry or a replay
 * answers from the stored document.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { insertRun, loadedSnapshot, newRunDoc, runsCollection, type RunDoc } from '../../db/runs';
import { recordRunOutcome } from '../../db/run-end';
import { findWorkflow, type WorkflowDoc } from '../../db/workflows';
import { runKindOf } from '../../shared/metrics/run-kind';
import type { WorkerMetrics } from '../metrics';
import { holdsConcurrentSlot } from '../../shared/runs/concurrent-limit';
import { buildSnapshot, MAX_SNAPSHOT_BYTES } from '../../shared/runs/snapshot';
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

export function createScheduledRunActivities(deps: { db: Db; config: Config; metrics: WorkerMetrics }) {
  const record = async (req: ScheduledRunRequest, snapshot: RunSnapshot, now: Date): Promise<void> => {
    const doc: RunDoc = {
      ...newRunDoc({
        snapshot,
        namespace: deps.config.TEMPORAL_NAMESPACE,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        now,
      }),
      schedule_id: req.schedule_id,
      deadline_at: req.deadline_at ? new Date(req.deadline_at) : null,
    };
    doc.temporal.run_id = req.temporal_run_id;
    try {
      await insertRun(deps.db, doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // a retry whose first attempt wrote it
    }
  };

  /** Records the run as failed (with the snapshot it had, or an empty one) and says so. */
  const refuse = async (
    req: ScheduledRunRequest,
    workflow: WorkflowDoc | null,
    refusal: Omit<Refusal, 'ok'>,
    now: Date,
  ): Promise<Refusal> => {
    const stub: RunSnapshot = {
      run_id: req.run_id,
      workflow_id: req.workflow_id,
      workflow_name: workflow?.name ?? '(deleted workflow)',
      owner_id: req.owner_id,
      input: req.input,
      steps: [],
      created_at: now.toISOString(),
    };
    await record(req, stub, now);
    await recordRunOutcome(deps.db, req.run_id, {
      status: 'failed',
      error: { step_id: null, reason: refusal.reason, message: refusal.message },
    });
    return { ok: false, ...refusal };
  };

  /**
   * USER_MAX_CONCURRENT_RUNS, as at the API's start (shared/runs/concurrent-limit.ts). A refused run ends at once,
   * failed, rather than waiting for a slot: the schedule's next fire is the retry.
   */
  const refuseBeyondConcurrentLimit = async (req: ScheduledRunRequest, createdAt: Date): Promise<Refusal | null> => {
    const limit = deps.config.USER_MAX_CONCURRENT_RUNS;
    const run = { _id: req.run_id, owner_id: req.owner_id, created_at: createdAt };
    if (await holdsConcurrentSlot(deps.db, run, limit)) return null;
    const message = `the owner already has ${limit} runs in flight (USER_MAX_CONCURRENT_RUNS)`;
    await recordRunOutcome(deps.db, req.run_id, {
      status: 'failed',
      error: { step_id: null, reason: 'concurrent_runs_exceeded', message },
    });
    return { ok: false, reason: 'concurrent_runs_exceeded', message };
  };

  return {
    async prepareScheduledRun(req: ScheduledRunRequest): Promise<ScheduledRunVerdict> {
      const existing = await runsCollection(deps.db).findOne({ _id: req.run_id, owner_id: req.owner_id });
      if (existing) {
        const reason = existing.error?.reason;
        if (existing.status === 'failed' && existing.error && isRefusal(reason)) {
          return { ok: false, reason, message: existing.error.message };
        }
        // Still queued: the attempt that recorded it may have stopped before (or after) counting; count again.
        const refused =
          existing.status === 'queued' ? await refuseBeyondConcurrentLimit(req, existing.created_at) : null;
        return refused ?? { ok: true, snapshot: loadedSnapshot(existing) };
      }
      const now = new Date();
      const workflow = await findWorkflow(deps.db, req.owner_id, req.workflow_id);
      if (!workflow) {
        return refuse(
          req,
          null,
          {
            reason: 'workflow_invalid',
            message: `the scheduled workflow ${req.workflow_id} no longer exists; delete or change schedule ${req.schedule_id}`,
          },
          now,
        );
      }
      const problems = inputProblems(workflow, req);
      if (problems.length > 0) {
        return refuse(
          req,
          workflow,
          { reason: 'invalid_input', message: `the schedule's input: ${problems.join('; ')}` },
          now,
        );
      }
      const loaded = await loadSnapshotSources(deps.db, req.owner_id, workflow, deps.config.SUBWORKFLOW_MAX_DEPTH);
      if (!loaded.ok) return refuse(req, workflow, { reason: 'workflow_invalid', message: loaded.problem }, now);
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
      const bytes = Buffer.byteLength(JSON.stringify(snapshot), 'utf8');
      if (bytes > MAX_SNAPSHOT_BYTES) {
        const message = `the run snapshot is ${bytes} bytes; the limit is ${MAX_SNAPSHOT_BYTES}`;
        return refuse(req, workflow, { reason: 'too_large', message }, now);
      }
      await record(req, snapshot, now);
      const refused = await refuseBeyondConcurrentLimit(req, now);
      if (refused) return refused;
      // Counted here, as the API counts the runs it starts, so that started minus finished stays the runs in flight.
      // A refused run is counted neither started nor finished; a retry that finds the run recorded does not count it
      // again (at most once: a crash between the write and this line loses one count rather than doubling one).
      deps.metrics.runStarted(runKindOf(snapshot.steps));
      return { ok: true, snapshot };
    },
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
