/**
 * The status a read answers for a run whose projection is behind Temporal, computed and never written: the
 * worker's reconciler (temporal/reconciler.ts) writes the same outcome, built by the same deriveOutcome.
 */
import type { RunOutcome } from '../../../db/runs';
import type { JsonValue } from '../../../domain/json';
import type { OutputRef } from '../../../domain/run';
import type { PresentableRun } from '../../../shared/run-view/view';

/** The view as recordRunEnd (db/run-end.ts) would leave it after writing `outcome` at `at`. */
export function withOutcome(run: PresentableRun, outcome: RunOutcome, at: Date): PresentableRun {
  const updates = new Map((outcome.stepUpdates ?? []).map((u) => [u.id, u]));
  return {
    ...run,
    status: outcome.status,
    error: outcome.error,
    updated_at: at,
    completed_at: at,
    steps: run.steps.map((s) => {
      const u = updates.get(s.id);
      if (!u) return s;
      return {
        ...s,
        status: u.status,
        ...(u.error !== undefined ? { error: u.error } : {}),
        ...(u.skip_reason !== undefined ? { skip_reason: u.skip_reason } : {}),
        ...(u.status === 'failed' ? { completed_at: at } : {}),
      };
    }),
  };
}

/** The view with the outputs of completed steps whose completion write was lost, as restoreLostOutputs writes them. */
export function withOutputs(run: PresentableRun, outputs: Record<string, JsonValue | OutputRef>): PresentableRun {
  if (Object.keys(outputs).length === 0) return run;
  return {
    ...run,
    steps: run.steps.map((s) => {
      const out = outputs[s.id];
      return out !== undefined && s.status === 'completed' && s.output_json === null
        ? { ...s, output_json: JSON.stringify(out) }
        : s;
    }),
  };
}
