/**
 * Step and execution states of a run, written by the worker: each step's activity records its own attempts (started,
 * retrying, completed, failed), and the workflow's projection activity what it decides itself (skips, waits, map and
 * loop progress). A plain step lives in its run's document (`steps[]`); a map item or loop iteration in
 * `step_executions` (./step-executions.ts). Each change that takes effect goes to the run's event log
 * (./run-events.ts) at a seq allocated by the same write (./step-writes.ts). Every write is conditional on the run not
 * being terminal. Waits for an owner's decision are in ./step-waits.ts.
 */
import type { Db } from 'mongodb';
import { appendRunEvents, type NewRunEvent } from './run-events';
import { notTerminal, runsCollection, type EgressDenial } from './runs';
import type { StepChange } from './step-events';
import { commitExecutionWrite } from './execution-commits';
import { innerExecution, logged, updateExecution, updateStep, type StepWrite } from './step-writes';
import type { JsonValue } from '../domain/json';
import type { OutputRef, Usage } from '../domain/run';
import type { StepError } from '../domain/steps';

/**
 * A step attempt has started (called by the step's activity at the start of every attempt). Moves the run to
 * `running`. Returns false when the run is already terminal (the caller may skip its work).
 */
export async function markStepRunning(
  db: Db,
  runId: string,
  stepId: string,
  attempt: number,
  opts: {
    itemsTotal?: number;
    input?: JsonValue;
    progress?: { turn: number; usage: Usage };
    /** The workflow's Temporal run id, recorded by the step write that moves the run to `running` (./runs.ts). */
    temporalRunId?: string | undefined;
  } = {},
): Promise<boolean> {
  const now = new Date();
  const change: StepChange = { type: 'step.started', attempt };
  // An agent step's first turn in flight rides along too (what setStepProgress writes), saving that write.
  const progress = opts.progress ? { turns: opts.progress.turn, usage: opts.progress.usage } : {};
  // The rendered input rides along (the same write): the status shows what the step was given from its start.
  const inputJson = opts.input !== undefined ? shownInput(opts.input) : undefined;
  const inner = innerExecution(stepId);
  if (inner) {
    return updateExecution(
      db,
      runId,
      inner,
      {
        status: 'running',
        attempts: attempt,
        ...(attempt <= 1 ? { started_at: now } : {}),
        ...(inputJson !== undefined ? { input_json: inputJson } : {}),
        ...progress,
      },
      { startedAt: now, change },
    );
  }
  // The stored status only ever moves queued → running → terminal (every writer of `running` writes the same value,
  // and never over a terminal one); `waiting` is derived from the steps when shown (domain/run-state.ts).
  const set: Record<string, unknown> = {
    status: 'running',
    updated_at: now,
    'steps.$.status': 'running',
    'steps.$.attempts': attempt,
  };
  if (attempt <= 1) set['steps.$.started_at'] = now;
  if (opts.temporalRunId !== undefined) set['temporal.run_id'] = opts.temporalRunId;
  if (opts.itemsTotal !== undefined) set['steps.$.items_total'] = opts.itemsTotal;
  if (inputJson !== undefined) set['steps.$.input_json'] = inputJson;
  if (opts.progress) {
    set['steps.$.turns'] = opts.progress.turn;
    set['steps.$.usage'] = opts.progress.usage;
  }
  // started_at of the run: the first step attempt; $min keeps the earliest across concurrent writers.
  return logged(
    db,
    runId,
    stepId,
    change,
    await updateStep(db, runId, stepId, { $set: set, $min: { started_at: now } }, 1),
  );
}

/**
 * A step finished. `usage`/`turns` are the step's totals (agent steps). `announce`: events logged just before the
 * step's (the model call that gave the answer) with seqs allocated by the same write; when the write does not take
 * effect (the run has ended), they are logged on their own, as the call happened all the same.
 */
export async function markStepCompleted(
  db: Db,
  runId: string,
  stepId: string,
  output: JsonValue | OutputRef,
  usage?: Usage,
  turns?: number,
  announce: NewRunEvent[] = [],
): Promise<boolean> {
  const now = new Date();
  const change: StepChange = { type: 'step.completed', output, ...(usage ? { usage } : {}) };
  const inner = innerExecution(stepId);
  if (inner) {
    // An execution's write may be refused by the execution alone (it has ended): its events come first, separately.
    await appendRunEvents(db, runId, announce);
    return updateExecution(
      db,
      runId,
      inner,
      {
        status: 'completed',
        output_json: JSON.stringify(output),
        error: null,
        completed_at: now,
        ...(usage ? { usage } : {}),
        ...(turns !== undefined ? { turns } : {}),
      },
      { change },
    );
  }
  const set: Record<string, unknown> = {
    updated_at: now,
    'steps.$.status': 'completed',
    'steps.$.output_json': JSON.stringify(output),
    'steps.$.error': null,
    'steps.$.completed_at': now,
  };
  if (usage) set['steps.$.usage'] = usage;
  if (turns !== undefined) set['steps.$.turns'] = turns;
  const write = await updateStep(db, runId, stepId, { $set: set }, 1 + announce.length);
  if (!write.wrote) await appendRunEvents(db, runId, announce);
  return logged(db, runId, stepId, change, write, announce);
}

/**
 * An attempt that started and finished before its start was written (a pure step; an action quicker than
 * START_WRITE_DELAY_MS, temporal/activities/action-step.ts): its start, input and completion in one write and its two
 * events in one append. A map item or loop iteration the same, on its execution document, grouped with the run's
 * other items that end at the same moment (./execution-commits.ts).
 */
export async function recordStepDone(
  db: Db,
  runId: string,
  stepId: string,
  done: {
    attempt: number;
    startedAt: Date;
    input?: JsonValue;
    output: JsonValue | OutputRef;
    /** As markStepRunning's: the workflow's Temporal run id. */
    temporalRunId?: string | undefined;
  },
): Promise<boolean> {
  const changes: StepChange[] = [
    { type: 'step.started', attempt: done.attempt },
    { type: 'step.completed', output: done.output },
  ];
  const inner = innerExecution(stepId);
  if (inner) {
    // A map's items end many at a time: their writes go together (./execution-commits.ts).
    return commitExecutionWrite(db, runId, {
      exec: inner,
      set: {
        status: 'completed',
        attempts: done.attempt,
        ...(done.attempt <= 1 ? { started_at: done.startedAt } : {}),
        ...(done.input !== undefined ? { input_json: shownInput(done.input) } : {}),
        output_json: JSON.stringify(done.output),
        error: null,
        completed_at: new Date(),
      },
      startedAt: done.startedAt,
      changes,
    });
  }
  const now = new Date();
  const set: Record<string, unknown> = {
    status: 'running',
    updated_at: now,
    'steps.$.status': 'completed',
    'steps.$.attempts': done.attempt,
    'steps.$.output_json': JSON.stringify(done.output),
    'steps.$.error': null,
    'steps.$.completed_at': now,
  };
  if (done.attempt <= 1) set['steps.$.started_at'] = done.startedAt;
  if (done.temporalRunId !== undefined) set['temporal.run_id'] = done.temporalRunId;
  if (done.input !== undefined) set['steps.$.input_json'] = shownInput(done.input);
  const write = await updateStep(db, runId, stepId, { $set: set, $min: { started_at: done.startedAt } }, 2);
  return logged(db, runId, stepId, changes, write);
}

/**
 * A step attempt failed. With `final` the step is `failed` (the workflow then records the run's outcome);
 * without, the step stays `running` and shows the error of the attempt that Temporal will retry.
 */
export async function markStepFailed(
  db: Db,
  runId: string,
  stepId: string,
  error: StepError,
  /** `output`: what later steps read of a failure the run goes on after (`{error}`), shown by the status. */
  opts: { final: boolean; attempt?: number; usage?: Usage; output?: JsonValue },
): Promise<boolean> {
  const now = new Date();
  const outputJson = opts.output !== undefined ? JSON.stringify(opts.output) : undefined;
  const change: StepChange = opts.final
    ? { type: 'step.failed', error }
    : { type: 'step.retrying', attempt: opts.attempt ?? 1, error };
  const inner = innerExecution(stepId);
  if (inner) {
    return updateExecution(
      db,
      runId,
      inner,
      {
        error,
        ...(opts.attempt !== undefined ? { attempts: opts.attempt } : {}),
        ...(opts.final ? { status: 'failed' as const, completed_at: now } : {}),
        ...(opts.usage ? { usage: opts.usage } : {}),
        ...(outputJson !== undefined ? { output_json: outputJson } : {}),
      },
      // The workflow's record of a failure it goes on after is the execution's last word, written over the
      // activity's own final one (which ended the execution first).
      { change, force: outputJson !== undefined },
    );
  }
  const set: Record<string, unknown> = { updated_at: now, 'steps.$.error': error };
  if (opts.attempt !== undefined) set['steps.$.attempts'] = opts.attempt;
  if (opts.usage) set['steps.$.usage'] = opts.usage;
  if (outputJson !== undefined) set['steps.$.output_json'] = outputJson;
  if (opts.final) {
    set['steps.$.status'] = 'failed';
    set['steps.$.completed_at'] = now;
  }
  return logged(db, runId, stepId, change, await updateStep(db, runId, stepId, { $set: set }, 1));
}

/** Inputs larger than this are recorded by their size only (the status is not the place for megabytes). */
export const INPUT_SHOWN_BYTES = 64 * 1024;

/** The rendered input of an execution, as the status shows it (idempotent: a retried write stores the same). */
export async function recordStepInput(db: Db, runId: string, stepId: string, input: JsonValue): Promise<boolean> {
  const json = shownInput(input);
  const inner = innerExecution(stepId);
  if (inner) return updateExecution(db, runId, inner, { input_json: json });
  return (await updateStep(db, runId, stepId, { $set: { 'steps.$.input_json': json } })).wrote;
}

function shownInput(input: JsonValue): string {
  const json = JSON.stringify(input);
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes > INPUT_SHOWN_BYTES ? JSON.stringify({ not_shown: true, bytes }) : json;
}

/**
 * Progress of a long step (the agent loop after each turn): cumulative usage and turns so far. `announce`: events to
 * log with it (the model call just made), with seqs allocated by the same write, or on their own when the run has
 * ended.
 */
export async function setStepProgress(
  db: Db,
  runId: string,
  stepId: string,
  progress: { turn: number; usage: Usage },
  announce: NewRunEvent[] = [],
): Promise<boolean> {
  const inner = innerExecution(stepId);
  if (inner) {
    await appendRunEvents(db, runId, announce);
    return updateExecution(db, runId, inner, { turns: progress.turn, usage: progress.usage });
  }
  const write = await updateStep(
    db,
    runId,
    stepId,
    { $set: { updated_at: new Date(), 'steps.$.turns': progress.turn, 'steps.$.usage': progress.usage } },
    announce.length,
  );
  await appendRunEvents(db, runId, announce, write.seqs);
  return write.wrote;
}

/**
 * A model call's turn, recorded after the call: the step's turns and usage so far go beside `written` (the call's
 * transcript entry and usage count), not after it, and the call's events (the rest of its live text,
 * `agent.model_call`) are logged once both have settled, so a reader of an event finds the entry. A step write that
 * fails or is refused (the run ended) still logs the events, on their own seqs: the call happened. `written` failing
 * rejects (the attempt fails); the step write failing is answered with its error.
 */
export async function recordTurn(
  db: Db,
  runId: string,
  stepId: string,
  progress: { turn: number; usage: Usage },
  events: NewRunEvent[],
  written: Promise<unknown>,
): Promise<{ failed?: unknown }> {
  const inner = innerExecution(stepId);
  const step = inner
    ? updateExecution(db, runId, inner, { turns: progress.turn, usage: progress.usage }).then(() => ({}) as StepWrite)
    : updateStep(
        db,
        runId,
        stepId,
        { $set: { updated_at: new Date(), 'steps.$.turns': progress.turn, 'steps.$.usage': progress.usage } },
        events.length,
      );
  const [write] = await Promise.all([
    step.then(
      (w): { w: StepWrite; failed?: unknown } => ({ w }),
      (failed: unknown): { w: StepWrite; failed?: unknown } => ({ w: { wrote: false }, failed }),
    ),
    written,
  ]);
  await appendRunEvents(db, runId, events, write.w.seqs);
  return write.failed === undefined ? {} : { failed: write.failed };
}

/** The status lists at most this many refused calls per step; the transcript keeps every one. */
export const EGRESS_DENIALS_SHOWN = 20;
const TARGET_CHARS = 200;

/**
 * Records a refused tool call in the step's status. $addToSet of the same value makes a retried write idempotent;
 * the list is capped (a model may try again and again) and a run that already ended is left alone — its transcript
 * still holds every attempt.
 */
export async function recordEgressDenied(
  db: Db,
  runId: string,
  stepId: string,
  denial: EgressDenial,
): Promise<boolean> {
  const target = denial.target.length > TARGET_CHARS ? `${denial.target.slice(0, TARGET_CHARS - 1)}…` : denial.target;
  // Refusals inside a map item or loop iteration are listed on their step (the transcript names the execution).
  stepId = innerExecution(stepId)?.stepId ?? stepId;
  const res = await runsCollection(db).updateOne(
    { _id: runId, status: notTerminal, 'steps.id': stepId },
    {
      $set: { updated_at: new Date() },
      $addToSet: { 'steps.$[s].egress_denied': { seq: denial.seq, tool: denial.tool, target } },
    },
    { arrayFilters: [{ 's.id': stepId, [`s.egress_denied.${EGRESS_DENIALS_SHOWN - 1}`]: { $exists: false } }] },
  );
  return res.matchedCount === 1;
}

/** A step (or execution) the run will not perform: its condition was false, or its dependencies were skipped. */
export async function markStepSkipped(db: Db, runId: string, stepId: string, reason: string): Promise<boolean> {
  const now = new Date();
  const change: StepChange = { type: 'step.skipped', reason };
  const inner = innerExecution(stepId);
  if (inner) return updateExecution(db, runId, inner, { status: 'skipped', completed_at: now }, { change });
  const write = await updateStep(
    db,
    runId,
    stepId,
    {
      $set: {
        updated_at: now,
        'steps.$.status': 'skipped',
        'steps.$.skip_reason': reason,
        'steps.$.completed_at': now,
      },
    },
    1,
  );
  return logged(db, runId, stepId, change, write);
}

/**
 * A sub-workflow execution started its child run: the parent's step shows the child's id, and the child's own
 * document learns Temporal's run id (so the reconciler never takes it for a run that was never started).
 */
export async function setChildRun(
  db: Db,
  runId: string,
  stepId: string,
  childRunId: string,
  temporalRunId?: string,
): Promise<boolean> {
  if (temporalRunId) {
    await runsCollection(db).updateOne(
      { _id: childRunId, 'temporal.run_id': null },
      { $set: { 'temporal.run_id': temporalRunId } },
    );
  }
  const change: StepChange = { type: 'step.child_run', child_run_id: childRunId };
  const inner = innerExecution(stepId);
  if (inner) return updateExecution(db, runId, inner, { child_run_id: childRunId }, { change });
  const set = { updated_at: new Date(), 'steps.$.child_run_id': childRunId };
  return logged(db, runId, stepId, change, await updateStep(db, runId, stepId, { $set: set }, 1));
}

/**
 * Fills in outputs of completed steps whose completion write was lost (a database outage longer than the workflow's
 * retries), from Temporal's record of the run. Only empty outputs are written, so a newer projection write wins.
 */
export async function restoreLostOutputs(
  db: Db,
  runId: string,
  outputs: Record<string, JsonValue | OutputRef>,
): Promise<void> {
  for (const [stepId, output] of Object.entries(outputs)) {
    await runsCollection(db).updateOne(
      { _id: runId },
      { $set: { 'steps.$[s].output_json': JSON.stringify(output) } },
      { arrayFilters: [{ 's.id': stepId, 's.status': 'completed', 's.output_json': null }] },
    );
  }
}
