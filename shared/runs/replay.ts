/**
 * A dataset item replayed against its recorded run (experiments in mode `replay`; docs/decisions/0640): the run it was
 * recorded from, found for the item's owner, and the plan of which steps of the target run again (domain/replay.ts).
 * Checked once when the experiment is created (a clear 400) and again when the item's run is made (the record may
 * have gone since: the item fails with the same sentence).
 */
import type { Db } from 'mongodb';
import type { DatasetItemDoc } from '../../db/dataset-items';
import { findRunRecord, isTerminal, loadedSnapshot, type RunDoc } from '../../db/runs';
import { canonicalJson } from '../../domain/json';
import { planReplay, replaySideEffect, type ReplayPlan } from '../../domain/replay';
import type { StepSnapshot } from '../../domain/run';

export type ReplaySource = { ok: true; run: RunDoc; plan: ReplayPlan } | { ok: false; problem: string };

export async function replaySource(
  db: Db,
  ownerId: string,
  item: Pick<DatasetItemDoc, 'item_id' | 'source_run_id' | 'input_json'>,
  target: readonly StepSnapshot[],
): Promise<ReplaySource> {
  const runId = item.source_run_id;
  if (runId === null) {
    return {
      ok: false,
      problem: `item ${item.item_id} was not recorded from a run (it has no source_run_id): replay has nothing to serve it from`,
    };
  }
  const run = await findRunRecord(db, ownerId, runId);
  if (!run) {
    return {
      ok: false,
      problem: `item ${item.item_id}: its recorded run ${runId} no longer exists (deleted or expired); replay needs the record`,
    };
  }
  if (!isTerminal(run.status)) {
    return { ok: false, problem: `item ${item.item_id}: its recorded run ${runId} has not ended (${run.status})` };
  }
  const plan = planReplay({
    target,
    recordedSteps: loadedSnapshot(run).steps,
    recorded: run.steps.map((s) => ({ id: s.id, status: s.status, has_output: s.output_json != null })),
    inputChanged: canonicalJson(JSON.parse(item.input_json)) !== canonicalJson(run.input),
  });
  const effect = replaySideEffect(target, plan);
  if (effect) return { ok: false, problem: `item ${item.item_id} (recorded run ${runId}): ${effect}` };
  return { ok: true, run, plan };
}
