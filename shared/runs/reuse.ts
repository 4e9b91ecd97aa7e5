/**
 * Taking a recorded run's step outputs over into a new run, the one way a rerun (api/commands/rerun.ts) and a replayed
 * experiment item (temporal/activities/experiment.ts) do it: the outputs ride in the new snapshot's
 * `rerun.reused_json` (the workflow takes those steps as finished and never schedules them, temporal/workflows/graph.ts),
 * the new run's document shows them completed and linked to the run they came from, and its event log opens with them.
 */
import type { Db } from 'mongodb';
import { readBlob, storeOutput } from '../../db/blobs';
import { ZERO_USAGE, type RunDoc } from '../../db/runs';
import { logStepChange } from '../../db/step-events';
import type { JsonValue } from '../../domain/json';
import { isOutputRef, type OutputRef } from '../../domain/run';

/** Reused outputs above this ride in the new run's snapshot by reference (the snapshot has a size limit). */
const INLINE_REUSED_BYTES = 8 * 1024;

/**
 * The reused outputs as the new run will hold them, by step id (JSON text): small values inline; large ones (and
 * those the source stored by reference) copied into the new run's blobs, so every read stays within the run that
 * reads it.
 */
export async function carryOutputs(
  db: Db,
  source: RunDoc,
  stepIds: readonly string[],
  runId: string,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const id of stepIds) out[id] = JSON.stringify(await carryOutput(db, source, id, runId));
  return out;
}

async function carryOutput(db: Db, source: RunDoc, stepId: string, runId: string): Promise<JsonValue | OutputRef> {
  const json = source.steps.find((s) => s.id === stepId)?.output_json;
  if (json == null) throw new Error(`step ${stepId} has no recorded output`);
  const stored = JSON.parse(json) as JsonValue | OutputRef;
  const value = isOutputRef(stored) ? await readBlob(db, source._id, stored.stepwise_blob) : stored;
  if (!isOutputRef(stored) && Buffer.byteLength(json, 'utf8') <= INLINE_REUSED_BYTES) return value;
  return storeOutput(db, runId, stepId, value, { force: true });
}

/** The new run's steps: reused ones completed (no usage: nothing was spent on them in this run), linked to `source`. */
export function withReusedSteps(doc: RunDoc, source: RunDoc, reused: ReadonlySet<string>): RunDoc['steps'] {
  const reusedOutputs = doc.snapshot.rerun?.reused_json ?? {};
  return doc.steps.map((step) => {
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
  });
}

/** The new run's event log opens with its reused steps, as completed (idempotent: a repeat writes the same lines). */
export async function logReusedSteps(db: Db, doc: RunDoc): Promise<void> {
  for (const step of doc.steps) {
    if (!step.reused_from_run_id || step.output_json === null) continue;
    const output = JSON.parse(step.output_json) as JsonValue | OutputRef;
    await logStepChange(db, doc._id, step.id, {
      type: 'step.completed',
      output,
      reused_from_run_id: step.reused_from_run_id,
    });
  }
}
