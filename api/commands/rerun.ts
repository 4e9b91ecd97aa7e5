/**
 * POST …/runs/:runId/rerun: a new run of the same snapshot (not the workflow as edited since) that takes the recorded
 * outputs of the source run's completed steps as finished and runs the rest — the chosen step and everything that
 * depends on it, plus whatever had not completed. No model call, e-mail or HTTP request of a reused step is made
 * again: the workflow never schedules them (temporal/workflows/graph.ts). docs/runs.md "Rerun" says why this and not
 * Temporal's reset.
 */
import type { Db } from 'mongodb';
import { readBlob, storeOutput } from '../../db/blobs';
import {
  addRerun,
  isTerminal,
  loadedSnapshot,
  runsCollection,
  ZERO_USAGE,
  type RerunOverrides,
  type RunDoc,
  type RunStepDoc,
} from '../../db/runs';
import { logStepChange } from '../../db/step-events';
import { descendantsOf, resolveDependencies, topologicalOrder } from '../../domain/graph';
import type { JsonValue } from '../../domain/json';
import { isOutputRef, type OutputRef, type RunSnapshot, type StepSnapshot } from '../../domain/run';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { overridesProblem, withOverrides } from '../../shared/runs/overrides';
import { hashRequest, launchRun, type StartedRun, type StartRunDeps } from './start-run';

/** Reused outputs above this ride in the new run's snapshot by reference (the snapshot has a size limit). */
const INLINE_REUSED_BYTES = 8 * 1024;

export interface RerunRequest {
  ownerId: string;
  runId: string;
  fromStep: string | undefined;
  /** By agent step id: what the new run changes in that step (its model); those steps run again. */
  overrides?: RerunOverrides;
  idempotencyKey: string | undefined;
  baseUrl: string;
  /** Takes one run start from the caller's budget (429 when spent); called once the run is found and can rerun. */
  chargeRunStart?: () => Promise<void>;
}

export interface RerunStarted extends StartedRun {
  rerun_of: string;
  from_step: string;
  reused_steps: string[];
  overrides: RerunOverrides | null;
}

export interface RerunPlan {
  fromStep: string;
  /** Step ids whose outputs the new run takes over, in the snapshot's order. */
  reused: string[];
}

/**
 * Which steps a rerun from `fromStep` (default: the first step in dependency order that did not complete) runs again:
 * that step, every step that depends on it, and every step that did not complete with an output — together with
 * their dependents, so no reused output was computed from one that changes. The rest is reused.
 */
export function planRerun(
  snapshot: RunSnapshot,
  steps: readonly RunStepDoc[],
  fromStep?: string,
  alsoRerun: readonly string[] = [],
): RerunPlan {
  const deps = resolveDependencies(snapshot.steps);
  const topo = topologicalOrder(snapshot.steps, deps);
  const order = topo.ok ? topo.order : snapshot.steps.map((s) => s.id);
  const byId = new Map(steps.map((s) => [s.id, s]));
  const done = (id: string) => byId.get(id)?.status === 'completed' && byId.get(id)?.output_json != null;
  let from = fromStep;
  if (from === undefined) {
    // A completed run rerun with overrides runs again from the first overridden step: naming it twice adds nothing.
    from =
      order.find((id) => byId.get(id)?.status === 'failed') ??
      order.find((id) => !done(id)) ??
      order.find((id) => alsoRerun.includes(id));
    if (from === undefined) {
      throw new BadRequestError(
        'from_step: every step of this run completed; name the step to run again (or override one)',
        'invalid_field',
      );
    }
  } else if (!deps.has(from)) {
    throw new BadRequestError(
      `from_step: the run has no step "${from}" (name a step, not a map item or iteration)`,
      'invalid_field',
    );
  }
  const rerun = new Set<string>();
  for (const id of [from, ...alsoRerun, ...order.filter((id) => !done(id))]) {
    rerun.add(id);
    for (const d of descendantsOf(id, deps)) rerun.add(d);
  }
  return { fromStep: from, reused: snapshot.steps.map((s) => s.id).filter((id) => !rerun.has(id)) };
}

export async function rerunRun(deps: StartRunDeps, req: RerunRequest): Promise<RerunStarted> {
  const source = await runsCollection(deps.db).findOne({ _id: req.runId, owner_id: req.ownerId });
  if (!source) throw new NotFoundError(`run ${req.runId} not found`);
  if (source.parent_run_id) {
    throw new ConflictError(`run ${req.runId} is a sub-workflow run; rerun its parent ${source.parent_run_id}`);
  }
  if (!isTerminal(source.status)) {
    throw new ConflictError(`run ${req.runId} has not ended (${source.status}); cancel it or wait for its end first`);
  }
  const sourceSnapshot = loadedSnapshot(source);
  const overrides = req.overrides && Object.keys(req.overrides).length > 0 ? req.overrides : undefined;
  const steps = applyOverrides(sourceSnapshot.steps, overrides);
  const plan = planRerun(sourceSnapshot, source.steps, req.fromStep, Object.keys(overrides ?? {}));
  const requestHash = hashRequest({
    rerun_of: source._id,
    from_step: plan.fromStep,
    ...(overrides ? { overrides } : {}),
  });
  const timeoutSeconds = source.deadline_at
    ? Math.round((source.deadline_at.getTime() - source.created_at.getTime()) / 1000)
    : undefined;
  const started = await launchRun(
    deps,
    {
      ownerId: req.ownerId,
      idempotencyKey: req.idempotencyKey,
      baseUrl: req.baseUrl,
      requestHash,
      chargeRunStart: req.chargeRunStart,
    },
    {
      prepare: async (runId, now) => {
        const reused: Record<string, string> = {};
        for (const id of plan.reused) reused[id] = JSON.stringify(await carryOutput(deps.db, source, id, runId));
        const snapshot: RunSnapshot = {
          ...sourceSnapshot,
          steps,
          run_id: runId,
          created_at: now.toISOString(),
          rerun: { run_id: source._id, from_step: plan.fromStep, reused_json: reused },
        };
        return { snapshot, timeoutSeconds, adjust: (doc) => withReusedSteps(doc, source, plan, overrides) };
      },
      // Reused steps appear in the new run's event log first, as completed.
      beforeStart: async (doc) => {
        for (const step of doc.steps) {
          if (!step.reused_from_run_id || step.output_json === null) continue;
          const output = JSON.parse(step.output_json) as JsonValue | OutputRef;
          await logStepChange(deps.db, doc._id, step.id, {
            type: 'step.completed',
            output,
            reused_from_run_id: step.reused_from_run_id,
          });
        }
      },
      afterStart: async (doc) => {
        await addRerun(deps.db, source._id, doc._id);
      },
    },
  );
  return {
    ...started,
    rerun_of: source._id,
    from_step: plan.fromStep,
    reused_steps: plan.reused,
    overrides: overrides ?? null,
  };
}

/**
 * The source snapshot's steps with the overrides applied. Only agent steps of the snapshot's top level take one: the
 * snapshot freezes the model resolved at the first start (LLM_DEFAULT_MODEL included), so a provider fixed since is
 * reached only by naming the model again here.
 */
export function applyOverrides(steps: readonly StepSnapshot[], overrides: RerunOverrides | undefined): StepSnapshot[] {
  const problem = overridesProblem(steps, overrides);
  if (problem) throw new BadRequestError(problem, 'invalid_field');
  return withOverrides(steps, overrides);
}

/**
 * A reused output as the new run will hold it: small values inline; large ones (and those the source stored by
 * reference) copied into the new run's blobs, so every read stays within the run that reads it.
 */
async function carryOutput(db: Db, source: RunDoc, stepId: string, runId: string): Promise<JsonValue | OutputRef> {
  const json = source.steps.find((s) => s.id === stepId)?.output_json;
  if (json == null) throw new Error(`step ${stepId} has no recorded output`);
  const stored = JSON.parse(json) as JsonValue | OutputRef;
  const value = isOutputRef(stored) ? await readBlob(db, source._id, stored.stepwise_blob) : stored;
  if (!isOutputRef(stored) && Buffer.byteLength(json, 'utf8') <= INLINE_REUSED_BYTES) return value;
  return storeOutput(db, runId, stepId, value, { force: true });
}

/** The new run's document: reused steps completed (no usage: nothing was spent on them in this run), linked. */
function withReusedSteps(doc: RunDoc, source: RunDoc, plan: RerunPlan, overrides: RerunOverrides | undefined): RunDoc {
  const reused = new Set(plan.reused);
  const reusedOutputs = doc.snapshot.rerun?.reused_json ?? {};
  return {
    ...doc,
    rerun_of: source._id,
    ...(overrides ? { rerun_overrides: overrides } : {}),
    steps: doc.steps.map((step) => {
      const from = source.steps.find((s) => s.id === step.id);
      if (!reused.has(step.id) || !from) return step;
      return {
        ...step,
        status: 'completed',
        output_json: reusedOutputs[step.id] ?? null,
        usage: { ...ZERO_USAGE },
        turns: from.turns,
        ...(from.items_total != null ? { items_total: from.items_total } : {}),
        ...(from.child_run_id ? { child_run_id: from.child_run_id } : {}),
        reused_from_run_id: source._id,
        started_at: from.started_at,
        completed_at: from.completed_at,
      };
    }),
  };
}
