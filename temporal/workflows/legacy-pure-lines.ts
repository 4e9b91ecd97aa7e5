/**
 * Lines of pure steps, kept only so that histories recorded with them replay (patches PURE_LINES, then
 * STEP_PER_ACTIVITY: ./patches.ts). Such a run ran a `transform` and the `transform`s waiting only for it and for one
 * another (or for steps already completed) in one local activity, runPureLine. New runs run every step in its own
 * activity: `findPureLine` answers undefined for them. Removed with the PURE_LINES patch
 * (docs/decisions/0120-patch-lifecycle.md).
 */
import { patched } from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import type { RenderContext } from '../../domain/render';
import type { ActionStepSnapshot, StepSnapshot, StepStatus } from '../../domain/run';
import type { PureLineResult } from '../../domain/steps';
import { PURE_LINES, STEP_PER_ACTIVITY } from './patches';
import type { RunEnv } from './run-env';

/**
 * The line of pure steps starting at `head`, or undefined when `head` runs alone: a plain `transform` (no map, loop,
 * condition or on_error: continue) and the other such pending steps that wait only for it, for one another and for
 * steps that completed. List order decides the line's order, each step after all it waits for. `alone`: steps a
 * line stopped at, which run alone from then on.
 */
export function findPureLine(
  head: StepSnapshot,
  steps: readonly StepSnapshot[],
  status: (id: string) => StepStatus,
  deps: ReadonlyMap<string, string[]>,
  alone: ReadonlySet<string>,
): ActionStepSnapshot[] | undefined {
  if (!isPlainPure(head) || alone.has(head.id)) return undefined;
  const line: ActionStepSnapshot[] = [head];
  const inLine = new Set([head.id]);
  for (let grew = true; grew;) {
    grew = false;
    for (const step of steps) {
      if (inLine.has(step.id) || alone.has(step.id) || !isPlainPure(step)) continue;
      if (status(step.id) !== 'pending') continue;
      const waitsFor = deps.get(step.id) ?? [];
      if (!waitsFor.some((d) => inLine.has(d))) continue;
      if (!waitsFor.every((d) => inLine.has(d) || status(d) === 'completed')) continue;
      line.push(step);
      inLine.add(step.id);
      grew = true;
    }
  }
  // The order of these calls is what the recorded histories hold: a marker of STEP_PER_ACTIVITY (new runs) first.
  return line.length > 1 && !patched(STEP_PER_ACTIVITY) && patched(PURE_LINES) ? line : undefined;
}

/**
 * A line of pure steps in one local activity; returns the results of the steps that completed, a prefix of the
 * line, each recorded by the activity (or here, when its write failed).
 */
export async function runPureLine(
  steps: ActionStepSnapshot[],
  ctx: RenderContext,
  env: RunEnv,
): Promise<PureLineResult> {
  const result = await uncancelledLocalActivities({
    summary: `transform ${steps.map((s) => s.id).join(', ')}`,
    // Each step's own timeout bounds its evaluation; the line gets their sum.
    startToCloseTimeout: `${steps.reduce((sum, s) => sum + s.timeout_seconds, 0)} seconds`,
    // Only a lost worker or a timeout fails the activity itself (a step that fails ends the line instead).
    retry: { maximumAttempts: 3, initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  }).runPureLine({
    run_id: env.runId,
    steps: steps.map((s) => ({ step_id: s.id, action_type: 'transform', config: s.config, input: s.input })),
    ctx,
  });
  for (const [i, step] of result.completed.entries()) {
    if (step.projected === false) await env.project(steps[i]!.id, { kind: 'completed', output: step.output });
  }
  return result;
}

/** A step a line may hold: a `transform` that runs once, unconditionally, and fails the run when it fails. */
function isPlainPure(step: StepSnapshot): step is ActionStepSnapshot {
  return (
    step.kind === 'action' &&
    step.action_type === 'transform' &&
    !step.map &&
    !step.loop &&
    step.when === undefined &&
    step.on_error !== 'continue'
  );
}
