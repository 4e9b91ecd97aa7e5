/**
 * Run search (GET /api/v1/runs): one owner's top-level runs across workflows, newest first, filtered by status,
 * workflow, creation time and the workflow's name. One query, served by an index whose keys are the equality fields
 * then the sort (INDEXES.runs; test/db/run-search-plan.test.ts checks every query shape against them).
 *
 * Status is what the status endpoint shows, not only what is stored: the stored status moves queued → running →
 * terminal, and `queued` / `running` / `waiting` of a run in flight are derived from its steps by deriveRunStatus
 * (domain/run-state.ts). runStatusFilter says the same thing in MongoDB terms, over `steps.status` — where
 * `{ 'steps.status': { $ne: x } }` means "no step is x" and `{ 'steps.status': x }` "some step is x".
 */
import type { Filter } from 'mongodb';
import { IN_FLIGHT_RUN_STATUSES, TERMINAL_RUN_STATUSES, type RunStatus, type StepStatus } from '../domain/run';
import type { RunDoc } from './runs';

export interface RunSearch {
  ownerId: string;
  statuses?: readonly RunStatus[] | undefined;
  workflowId?: string | undefined;
  /** Runs a schedule started. */
  scheduleId?: string | undefined;
  /** Runs created at or after. */
  createdAfter?: Date | undefined;
  /** Runs created before. */
  createdBefore?: Date | undefined;
  /** Case-insensitive substring of the workflow's name as the run started with it. */
  text?: string | undefined;
}

/** Stored statuses of a run in flight; `waiting` only on runs stored before it became derived. */
const IN_FLIGHT = [...IN_FLIGHT_RUN_STATUSES];
const STARTED_STEP: StepStatus[] = ['running', 'waiting', 'completed', 'failed', 'skipped'];
const FINISHED_STEP: StepStatus[] = ['completed', 'failed', 'skipped'];

/** The runs deriveRunStatus shows as `status`. */
export function runStatusFilter(status: RunStatus): Filter<RunDoc> {
  switch (status) {
    case 'completed':
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return { status };
    case 'queued':
      // Stored queued, and every step still pending.
      return { status: 'queued', 'steps.status': { $nin: STARTED_STEP } };
    case 'waiting':
      // In flight, some step waits, none runs.
      // Conditions on one array field go in $and: the embedded server misreads operators combined on one field.
      return {
        status: { $in: IN_FLIGHT },
        $and: [{ 'steps.status': 'waiting' }, { 'steps.status': { $ne: 'running' } }],
      };
    case 'running':
      // In flight, and: a step runs; or none waits and the run has started (stored past queued, or a step finished).
      return {
        status: { $in: IN_FLIGHT },
        $or: [
          { 'steps.status': 'running' },
          { 'steps.status': { $ne: 'waiting' }, status: { $in: ['running', 'waiting'] } },
          { $and: [{ 'steps.status': { $ne: 'waiting' } }, { 'steps.status': { $in: FINISHED_STEP } }] },
        ],
      };
  }
}

/** Regex metacharacters of the user's text, escaped: `q` is a substring, never a pattern. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function runSearchFilter(search: RunSearch): Filter<RunDoc> {
  // Sub-workflow runs are reached through their parent (null also matches documents without the field).
  // So are a thread's turns, through their thread (null matches runs without the field): a chat of 500 turns would
  // bury every other run. An experiment's runs are the experiment's to list (GET …/experiments/:id/results).
  const filter: Filter<RunDoc> = {
    owner_id: search.ownerId,
    parent_run_id: null,
    thread_id: null,
    experiment_id: null,
  };
  if (search.workflowId !== undefined) filter.workflow_id = search.workflowId;
  if (search.scheduleId !== undefined) filter.schedule_id = search.scheduleId;
  const statuses = [...new Set(search.statuses ?? [])];
  if (statuses.length > 0) {
    // The stored statuses they can have: an equality (a range of `$in` values) the index serves; the derived ones
    // are then told apart by their steps, among the documents the index found.
    const stored = [...new Set(statuses.flatMap((s) => (TERMINAL_RUN_STATUSES.includes(s) ? [s] : IN_FLIGHT)))];
    filter.status = stored.length === 1 ? stored[0] : { $in: stored };
    if (statuses.some((s) => !TERMINAL_RUN_STATUSES.includes(s))) filter.$or = statuses.map(runStatusFilter);
  }
  if (search.createdAfter || search.createdBefore) {
    filter.created_at = {
      ...(search.createdAfter ? { $gte: search.createdAfter } : {}),
      ...(search.createdBefore ? { $lt: search.createdBefore } : {}),
    };
  }
  if (search.text) filter.workflow_name = { $regex: literal(search.text), $options: 'i' };
  return filter;
}
