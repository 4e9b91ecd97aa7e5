/**
 * POST …/runs/:runId/rerun: a new run of the same snapshot (not the workflow as edited since) that takes the recorded
 * outputs of the source run's completed steps as finished and runs the rest — the chosen step and everything that
 * depends on it, plus whatever had not completed. No model call, e-mail or HTTP request of a reused step is made
 * again: the workflow never schedules them (temporal/workflows/graph.ts). docs/runs.md "Rerun" says why this and not
 * Temporal's reset.
 */
import {
  addRerun,
  isTerminal,
  loadedSnapshot,
  runsCollection,
  type RerunOverrides,
  type RunDoc,
  type RunStepDoc,
} from '../../db/runs';
import { descendantsOf, resolveDependencies, topologicalOrder } from '../../domain/graph';
import type { RunSnapshot, StepSnapshot } from '../../domain/run';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { overridesProblem, withOverrides } from '../../shared/runs/overrides';
import { carryOutputs, logReusedSteps, withReusedSteps } from '../../shared/runs/reuse';
import { hashRequest, launchRun, type StartedRun, type StartRunDeps } from './start-run';

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
        const reused = await carryOutputs(deps.db, source, plan.reused, runId);
        const snapshot: RunSnapshot = {
          ...sourceSnapshot,
          steps,
          run_id: runId,
          created_at: now.toISOString(),
          rerun: { run_id: source._id, from_step: plan.fromStep, reused_json: reused },
        };
        const adjust = (doc: RunDoc): RunDoc => ({
          ...doc,
          rerun_of: source._id,
          ...(overrides ? { rerun_overrides: overrides } : {}),
          steps: withReusedSteps(doc, source, new Set(plan.reused)),
        });
        return { snapshot, timeoutSeconds, adjust };
      },
      // Reused steps appear in the new run's event log first, as completed.
      beforeStart: (doc) => logReusedSteps(deps.db, doc),
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
