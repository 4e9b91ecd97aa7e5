/**
 * A run's end: the one write that turns a run terminal (the workflow's outcome, or the reconciler's for an end the
 * workflow never saw), closing the executions still open, clearing the approvals inbox and logging `run.ended`.
 * Written once; later calls change nothing.
 */
import type { Db } from 'mongodb';
import { removeRunApprovals } from './approvals';
import {
  appendRunEnded,
  grantFrom,
  endLogged,
  runEndedEvent,
  runEventId,
  type LoggedRunEvent,
  type RunEndedData,
} from './run-events';
import { notTerminal, runsCollection, isTerminal, type RunDoc } from './runs';
import { closeOpenExecutions } from './step-executions';
import type { RunOutcome, StepError } from '../domain/steps';
import { sumUsage } from '../domain/usage';

/**
 * Writes the terminal state once; later calls (and calls for an already terminal run) change nothing. The one
 * writer of a run's terminal fields (the workflow's outcome and the worker's reconciler both come here, with an
 * outcome built by deriveOutcome in domain/run-state.ts).
 */
export async function recordRunOutcome(
  db: Db,
  runId: string,
  outcome: RunOutcome,
  at: Date = new Date(),
): Promise<boolean> {
  return (await recordRunEnd(db, runId, outcome, at)) !== null;
}

/** What the write that turned a run terminal returns of it (enough for its `run.ended` event and its metrics). */
export type EndedRun = Pick<
  RunDoc,
  'status' | 'error' | 'steps' | 'created_at' | 'completed_at' | 'parent_run_id' | 'thread_id'
>;

/** recordRunOutcome, returning the run as its terminal write left it, or null when it was terminal already. */
export async function recordRunEnd(
  db: Db,
  runId: string,
  outcome: RunOutcome,
  at: Date = new Date(),
  /** The workflow's Temporal run id, when the workflow itself ends the run (a run that never started a step). */
  temporalRunId?: string,
): Promise<EndedRun | null> {
  const set: Record<string, unknown> = {
    status: outcome.status,
    error: outcome.error,
    updated_at: at,
    completed_at: at,
    ...(temporalRunId !== undefined ? { 'temporal.run_id': temporalRunId } : {}),
  };
  const arrayFilters: Record<string, unknown>[] = [];
  const max: Record<string, number> = {};
  setStepUpdates(outcome.stepUpdates ?? [], set, arrayFilters, max, at);
  if (outcome.status !== 'completed') {
    // Map items and loop iterations still open end with the run (a completed run has none open). Closed before the
    // run turns terminal, so no reader ever sees an ended run with items still running; a late write from an item's
    // activity cannot reopen them (terminal executions are never rewritten).
    await closeOpenExecutions(db, runId, executionStopOf(outcome), at);
  }
  // The document as written comes back, so the end is logged from it without reading it again.
  const allocatedAt = Date.now();
  const ended = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal },
    { $set: set, $inc: { event_seq: 1 }, ...(Object.keys(max).length > 0 ? { $max: max } : {}) },
    {
      ...(arrayFilters.length > 0 ? { arrayFilters } : {}),
      returnDocument: 'after',
      projection: ENDED_PROJECTION,
    },
  );
  if (!ended) {
    // Already terminal (a retried or racing writer): whatever is stored is logged, once.
    await removeRunApprovals(db, runId);
    await logRunEnded(db, runId);
    return null;
  }
  // Approval steps and agent steps (a destructive MCP call waiting for a decision) list approvals: whatever the
  // run listed goes with it, so the inbox holds only what can still be decided (one delete on index `by_run`).
  await removeRunApprovals(db, runId);
  // The write allocated the end's seq: the counter as it returned.
  const counter = (ended as { event_seq?: number }).event_seq ?? 1;
  await appendRunEnded(db, runId, runEndedData(ended), grantFrom({ event_seq: counter - 1 }, allocatedAt));
  return ended;
}

/** The outcome's step updates into `set` and `max`, one array filter each (`s0`, `s1`, … name their steps by id). */
function setStepUpdates(
  updates: NonNullable<RunOutcome['stepUpdates']>,
  set: Record<string, unknown>,
  arrayFilters: Record<string, unknown>[],
  max: Record<string, number>,
  at: Date,
): void {
  updates.forEach((u, i) => {
    const step = `steps.$[s${i}]`;
    set[`${step}.status`] = u.status;
    if (u.error !== undefined) set[`${step}.error`] = u.error;
    if (u.skip_reason !== undefined) set[`${step}.skip_reason`] = u.skip_reason;
    if (u.status === 'failed') set[`${step}.completed_at`] = at;
    // The workflow's count of the step's calls; $max: a model call's own progress write may have counted one more
    // (its answer arrived as the step was stopped), and usage never goes down.
    if (u.usage) {
      max[`${step}.usage.llm_calls`] = u.usage.llm_calls;
      max[`${step}.usage.input_tokens`] = u.usage.input_tokens;
      max[`${step}.usage.output_tokens`] = u.usage.output_tokens;
      if (u.usage.estimated) set[`${step}.usage.estimated`] = true;
    }
    arrayFilters.push({ [`s${i}.id`]: u.id });
  });
}

const ENDED_PROJECTION = {
  status: 1,
  error: 1,
  event_seq: 1,
  'steps.id': 1,
  'steps.status': 1,
  'steps.usage': 1,
  'steps.action_type': 1,
  'steps.kind': 1,
  // The step attempts of `delay` and `approval` are counted from these when the run ends
  // (temporal/activities/projection.ts).
  'steps.started_at': 1,
  'steps.completed_at': 1,
  'steps.reused_from_run_id': 1,
  created_at: 1,
  completed_at: 1,
  parent_run_id: 1,
  // A thread's turn ends in its thread too (shared/threads/end-turn.ts).
  thread_id: 1,
} as const;

/** Logs `run.ended` from the run's terminal document (a no-op when it is not terminal or was logged before). */
export async function logRunEnded(db: Db, runId: string): Promise<void> {
  const run = await runsCollection(db).findOne({ _id: runId }, { projection: ENDED_PROJECTION });
  if (!run || !isTerminal(run.status)) return;
  await appendRunEnded(db, runId, runEndedData(run));
}

/**
 * For readers of the event log (which write nothing): `run.ended` of a terminal run whose end was never logged (its
 * writer stopped between its two writes and was not retried), as the writer would have logged it, at `seq` (the seq
 * after the run's counter: a writer that logs it later takes that very seq). Null when the run is not terminal or
 * its end is logged.
 */
export async function unloggedRunEnd(db: Db, runId: string, seq: number): Promise<LoggedRunEvent | null> {
  const [run, logged] = await Promise.all([
    runsCollection(db).findOne({ _id: runId }, { projection: ENDED_PROJECTION }),
    endLogged(db, runId),
  ]);
  if (!run || !isTerminal(run.status) || logged) return null;
  const event = runEndedEvent(runEndedData(run));
  return {
    _id: runEventId(runId, seq),
    run_id: runId,
    seq,
    key: `${runId}/${event.key}`,
    type: 'run.ended',
    at: run.completed_at ?? new Date(),
    data_json: JSON.stringify(event.data),
  };
}

function runEndedData(run: Pick<RunDoc, 'status' | 'error' | 'steps'>): RunEndedData {
  const usage = sumUsage(run.steps.map((s) => s.usage));
  return {
    status: run.status,
    error: run.error ? { ...run.error } : null,
    usage,
    steps: run.steps.map((s) => ({ id: s.id, status: s.status })),
  };
}

/** How an ending closes the executions it finds open: as its steps (domain/run-state.ts stopReason). */
function executionStopOf(outcome: RunOutcome): StepError {
  switch (outcome.status) {
    case 'timed_out':
      return { reason: 'timeout', message: outcome.error?.message ?? 'the run timed out' };
    case 'cancelled':
      return { reason: 'cancelled', message: 'cancelled' };
    case 'failed':
      return outcome.error?.reason === 'terminated'
        ? { reason: 'terminated', message: outcome.error.message }
        : { reason: 'cancelled', message: 'stopped: the run failed' };
    case 'completed':
      return { reason: 'internal', message: 'the run completed' };
  }
}
