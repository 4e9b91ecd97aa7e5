/**
 * Items from recorded runs (POST /api/v1/datasets/:id/items/from-runs): by run ids, or by a run search as GET
 * /api/v1/runs filters (db/run-search.ts) — "the last 50 completed runs of workflow X". Each item keeps the run's
 * input, its outputs (`{stepId: output}`, as the status view's `outputs`) as `expected`, and the run's id as
 * `source_run_id`, the reference a replay reads the record by. Only the caller's runs, and only runs that have ended.
 */
import type { Db } from 'mongodb';
import { runSearchFilter } from '../../db/run-search';
import { isTerminal, runsCollection, STATUS_PROJECTION, type RunDoc } from '../../db/runs';
import type { JsonObject } from '../../domain/json';
import { resolveOutputs } from '../../shared/run-view/outputs';
import { ConflictError, NotFoundError } from '../http/errors';
import type { LabelledItem } from './dataset-items';
import type { itemsRunSearch } from '../schemas/datasets';
import type { z } from 'zod';

type RunSearchInput = z.output<typeof itemsRunSearch>;
type RecordedRun = Omit<RunDoc, 'snapshot'>;

/** The default of a search's `limit`: "the last 50". */
const DEFAULT_SEARCH_LIMIT = 50;
/** Ids named in one message at most. */
const NAMED = 5;

const named = (ids: string[]) =>
  ids.slice(0, NAMED).join(', ') + (ids.length > NAMED ? ` and ${ids.length - NAMED} more` : '');

/** The caller's runs by id, in the order given; 404 naming the unknown ones, 409 naming those not ended. */
export async function runsById(db: Db, ownerId: string, runIds: string[]): Promise<RecordedRun[]> {
  const ids = [...new Set(runIds)];
  const docs = await runsCollection(db)
    .find({ _id: { $in: ids }, owner_id: ownerId }, { projection: STATUS_PROJECTION })
    .toArray();
  const byId = new Map(docs.map((d) => [d._id, d as RecordedRun]));
  const unknown = ids.filter((id) => !byId.has(id));
  if (unknown.length > 0) throw new NotFoundError(`run_ids: run ${named(unknown)} not found`);
  const open = ids.map((id) => byId.get(id)!).filter((run) => !isTerminal(run.status));
  if (open.length > 0) {
    const which = open.map((r) => `${r._id} (${r.status})`);
    throw new ConflictError(
      `run_ids: run ${named(which)} has not ended; only ended runs can become items (wait for the end, or leave it out)`,
      'run_not_ended',
    );
  }
  return ids.map((id) => byId.get(id)!);
}

/** The caller's newest runs the search finds, among ended ones only (default: completed). */
export async function runsBySearch(db: Db, ownerId: string, search: RunSearchInput): Promise<RecordedRun[]> {
  const filter = runSearchFilter({
    ownerId,
    statuses: search.status ?? ['completed'],
    workflowId: search.workflow_id,
    createdAfter: search.created_after,
    createdBefore: search.created_before,
    text: search.q,
  });
  const docs = await runsCollection(db)
    .find(filter, {
      projection: STATUS_PROJECTION,
      sort: { created_at: -1, _id: -1 },
      limit: search.limit ?? DEFAULT_SEARCH_LIMIT,
    })
    .toArray();
  return docs;
}

/** Each run as an item: its input, its outputs as `expected`, its id as `source_run_id`. */
export async function itemsOfRuns(db: Db, runs: RecordedRun[]): Promise<LabelledItem[]> {
  return Promise.all(
    runs.map(async (run) => {
      const outputs = await resolveOutputs(db, run);
      const expected: JsonObject = {};
      for (const step of run.steps) {
        const out = outputs.get(step.id);
        // As the status view's `outputs`: a failed step has one only when the run went on after it.
        if ((step.status === 'completed' || step.status === 'failed') && out !== undefined)
          expected[step.id] = out.value;
      }
      const metadata: JsonObject = { workflow_id: run.workflow_id, run_status: run.status };
      return {
        label: `run ${run._id}`,
        item: { input: run.input, expected: expected, metadata, source_run_id: run._id },
      };
    }),
  );
}
