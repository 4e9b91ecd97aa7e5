/**
 * Per-step overrides of a snapshot's steps, as a rerun (api/commands/rerun.ts) and an experiment's target
 * (temporal/activities/experiment.ts) take them: by agent step id, the model that step uses instead. One rule for
 * both, so an experiment's override means exactly what a rerun's does.
 */
import type { RerunOverrides } from '../../db/runs';
import type { StepSnapshot } from '../../domain/run';

/** What is wrong with `overrides` for these steps (`overrides.<id>: …`), or undefined when every one applies. */
export function overridesProblem(
  steps: readonly StepSnapshot[],
  overrides: RerunOverrides | undefined,
  what = 'the run',
): string | undefined {
  for (const id of Object.keys(overrides ?? {})) {
    const step = steps.find((s) => s.id === id);
    if (!step) return `overrides.${id}: ${what} has no step "${id}"`;
    if (step.kind !== 'agent') {
      return `overrides.${id}: only agent steps take overrides ("${id}" is a ${step.kind} step)`;
    }
  }
  return undefined;
}

/** The steps with the overrides applied (checked first with overridesProblem). */
export function withOverrides(steps: readonly StepSnapshot[], overrides: RerunOverrides | undefined): StepSnapshot[] {
  if (!overrides) return [...steps];
  return steps.map((step) => {
    const override = overrides[step.id];
    return override && step.kind === 'agent' ? { ...step, model: override.model } : step;
  });
}
