/**
 * The `runs` projection: one document per run, written by the API (creation) and by the worker's activities (each
 * step writes its own progress; the workflow writes the terminal state; the reconciler only what the workflow could
 * not, runtime/runs/reconciler.ts). The status endpoint never writes it, and reads
 * only this document in the common case. Every write after creation is conditional on the run not being terminal, so
 * a late or retried write never turns a finished run back into a running one.
 */
import { loadedSchema, storedSchema } from './schema-keys';
import { putApproval, removeApproval, removeRunApprovals } from './approvals';
import {
  appendRunEnded,
  appendRunEvents,
  fillEventSeq,
  runEndedEvent,
  type NewRunEvent,
  type RunEndedData,
} from './run-events';
import { logStepChange, logStepChanges, stepChangeEvents, type StepChange } from './step-events';
import { closeOpenExecutions, writeExecution } from './step-executions';
import { commitExecutionWrite } from './execution-commits';
import { parseExecutionId } from '../temporal/contract/exec-id';
import type { Db, Filter, UpdateFilter } from 'mongodb';
import type { ActionType } from '../temporal/contract/action-types';
import type { JsonObject, JsonValue } from '../temporal/contract/json';
import type { ApprovalRequest, RunOutcome, StepError } from '../temporal/contract/steps';
import {
  IN_FLIGHT_RUN_STATUSES,
  TERMINAL_RUN_STATUSES,
  type OutputRef,
  type RunBudget,
  type RunError,
  type RunSnapshot,
  type RunStatus,
  type StepSnapshot,
  type StepStatus,
  type Usage,
} from '../temporal/contract/run';

export interface RunStepDoc {
  id: string;
  template_id: string;
  template_name: string;
  kind: 'agent' | 'action' | 'workflow';
  action_type: ActionType | null;
  /** Graph steps: the condition it carries, and whether it maps or loops (absent on runs from before graphs). */
  when?: string | null;
  /** The steps it waits for, resolved (absent on runs from before it was recorded: then the step before it). */
  depends_on?: string[];
  repeat?: 'map' | 'loop' | null;
  /** Why the step was skipped (its condition was false, its dependencies were skipped, the run ended first). */
  skip_reason?: string | null;
  /** Map steps: the number of items, once the map has started. */
  items_total?: number | null;
  /** Sub-workflow steps: the child run's id (also a run of its own at endpoint 8). */
  child_run_id?: string | null;
  /** A rerun's step whose output was taken over from that run (nothing ran for it in this one). */
  reused_from_run_id?: string;
  status: StepStatus;
  /** Attempts started so far (activity attempts of an action step; 1 for steps the workflow performs itself). */
  attempts: number;
  /**
   * What the step was given, rendered, as JSON text: an agent's input, an action's config (with its input when it has
   * one), a sub-workflow's input. Null until it starts, and on runs from before it was recorded.
   */
  input_json?: string | null;
  /**
   * The step's output as JSON text (inline, or an OutputRef into the `blobs` collection that the status view
   * resolves). Text, not a sub-document: outputs may hold keys MongoDB refuses (`$…`, dotted).
   */
  output_json: string | null;
  /** The last error: the final one when `status` is failed, else the one of the last failed attempt. */
  error: StepError | null;
  /** LLM usage of the step so far (agent steps; zero for actions). */
  usage: Usage;
  /** Agent steps: model turns taken so far. */
  turns: number | null;
  /** Agent steps: tool calls refused by the step's egress policy (absent on runs from before the policy). */
  egress_denied?: EgressDenial[];
  started_at: Date | null;
  completed_at: Date | null;
}

/** One tool call an agent step's egress policy refused (the status shows them; the transcript has the details). */
export interface EgressDenial {
  /** The transcript seq of the refused call's result. */
  seq: number;
  tool: string;
  /** The refused recipient(s) or host. */
  target: string;
}

export interface RunTemporalRef {
  namespace: string;
  task_queue: string;
  /** Temporal's run id of the execution; null until the start is confirmed. */
  run_id: string | null;
}

/** Whether an open run is progressing, as a status read computes it from Temporal's describe (never stored). */
export interface RunLiveness {
  checked_at: Date;
  /** True when Temporal has work for this run that no worker has picked up for a while (e.g. every worker down). */
  stalled: boolean;
  message: string | null;
}

/** A rerun's changes to agent steps of the source snapshot, by step id (api/commands/rerun.ts). */
export type RerunOverrides = Record<string, { model: string }>;

export interface RunDoc {
  /** Also the Temporal workflow id. */
  _id: string;
  owner_id: string;
  workflow_id: string;
  workflow_name: string;
  status: RunStatus;
  input: JsonObject;
  steps: RunStepDoc[];
  error: RunError | null;
  /** The `Idempotency-Key` of the start, if any (claimed in db/idempotency.ts). */
  idempotency_key: string | null;
  /** The workflow input, kept so that a start interrupted by a crash can be completed by a retried request. */
  snapshot: RunSnapshot;
  /** The run's budget (a copy of snapshot.budget for the status view, which leaves the snapshot out); absent in older runs. */
  budget?: RunBudget | null;
  /**
   * Whether the run announces its end to a callback URL (temporal/workflows/webhook.ts), so a status read of a run
   * without one looks up no deliveries; absent in older runs, whose deliveries are looked up.
   */
  webhook?: boolean;
  temporal: RunTemporalRef;
  /** The trace of the request that started the run (runtime/tracing.ts); absent when tracing was off. */
  trace_id?: string;
  /** A rerun: the run it repeats (POST …/rerun); absent otherwise. */
  rerun_of?: string;
  /** A rerun's changes to agent steps of the source snapshot, by step id (POST …/rerun `overrides`); absent if none. */
  rerun_overrides?: RerunOverrides;
  /** The reruns started from this run, oldest first. */
  reruns?: string[];
  /** Sub-workflow runs: the run that started it (absent on top-level runs). */
  parent_run_id?: string | null;
  /** A run started by a schedule (db/schedules.ts): its id; absent on runs started otherwise. */
  schedule_id?: string;
  /** The seq of the run's last event in `run_events` (db/run-events.ts); absent until the first. */
  event_seq?: number;
  /** When Temporal's execution timeout ends the run (null: no timeout). */
  deadline_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Absent until the first step starts: `$min` never replaces a null (null sorts below every date). */
  started_at?: Date;
  completed_at: Date | null;
}

export type { RunOutcome, StepError };

export const ZERO_USAGE: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };

export function runsCollection(db: Db) {
  return db.collection<RunDoc>('runs');
}

const notTerminal = { $nin: [...TERMINAL_RUN_STATUSES] };

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_RUN_STATUSES.includes(status);
}

/** Maps every schema of a snapshot (db/schema-keys.ts): agent output schemas and sub-workflows', at any depth. */
function mapSnapshotSchemas(snapshot: RunSnapshot, map: <S extends JsonObject | undefined>(s: S) => S): RunSnapshot {
  const mapSteps = (steps: StepSnapshot[]): StepSnapshot[] =>
    steps.map((s) => {
      switch (s.kind) {
        case 'agent':
          return s.output_schema ? { ...s, output_schema: map(s.output_schema) } : s;
        case 'workflow':
          return {
            ...s,
            workflow: {
              ...s.workflow,
              ...(s.workflow.input_schema ? { input_schema: map(s.workflow.input_schema) } : {}),
              steps: mapSteps(s.workflow.steps),
            },
          };
        case 'action':
          return s;
      }
    });
  return { ...snapshot, steps: mapSteps(snapshot.steps) };
}

/** Records a new run document; its snapshot's schemas are stored with escaped keys. */
export async function insertRun(db: Db, doc: RunDoc): Promise<void> {
  await runsCollection(db).insertOne({ ...doc, snapshot: mapSnapshotSchemas(doc.snapshot, storedSchema) });
}

/** The snapshot of a stored run document, as the workflow takes it. */
export function loadedSnapshot(doc: Pick<RunDoc, 'snapshot'>): RunSnapshot {
  return mapSnapshotSchemas(doc.snapshot, loadedSchema);
}

/** The document of a run the API is about to start (status `queued`, not yet confirmed by Temporal). */
export function newRunDoc(args: {
  snapshot: RunSnapshot;
  namespace: string;
  taskQueue: string;
  idempotencyKey?: string;
  timeoutSeconds?: number;
  now?: Date;
}): RunDoc {
  const parent = args.snapshot.parent;
  const now = args.now ?? new Date();
  const { snapshot } = args;
  return {
    _id: snapshot.run_id,
    owner_id: snapshot.owner_id,
    workflow_id: snapshot.workflow_id,
    workflow_name: snapshot.workflow_name,
    status: 'queued',
    input: snapshot.input,
    steps: snapshot.steps.map((s) => ({
      id: s.id,
      template_id: s.template_id,
      template_name: s.template_name,
      kind: s.kind,
      action_type: s.kind === 'action' ? s.action_type : null,
      ...(s.when !== undefined ? { when: s.when } : {}),
      ...(s.depends_on !== undefined ? { depends_on: [...s.depends_on] } : {}),
      ...(s.map ? { repeat: 'map' as const } : s.loop ? { repeat: 'loop' as const } : {}),
      status: 'pending',
      attempts: 0,
      output_json: null,
      error: null,
      usage: { ...ZERO_USAGE },
      turns: null,
      started_at: null,
      completed_at: null,
    })),
    error: null,
    budget: snapshot.budget ?? null,
    // As startWebhookDelivery decides: a callback URL, and not a sub-workflow run.
    webhook: Boolean(snapshot.callback_url) && !parent,
    idempotency_key: args.idempotencyKey ?? null,
    ...(parent ? { parent_run_id: parent.run_id } : {}),
    snapshot,
    temporal: { namespace: args.namespace, task_queue: args.taskQueue, run_id: null },
    deadline_at: args.timeoutSeconds ? new Date(now.getTime() + args.timeoutSeconds * 1000) : null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}

/**
 * How many of the owner's runs have not ended, counting no further than `atMost` (callers compare with a limit, so
 * the work is bounded by the limit, not by the runs stored); with `before`, only those created earlier (by
 * created_at, then _id). Read from index by_owner_status_created. Derived from the stored runs, not a counter that a
 * crash could leave wrong.
 */
export async function countActiveRuns(
  db: Db,
  ownerId: string,
  atMost: number,
  before?: Pick<RunDoc, '_id' | 'created_at'>,
): Promise<number> {
  // Sub-workflow runs belong to their parent's slot (null also matches documents without the field).
  const filter: Filter<RunDoc> = {
    owner_id: ownerId,
    // Named rather than `$nin` the terminal ones, so that the status index pins them.
    status: { $in: [...IN_FLIGHT_RUN_STATUSES] },
    parent_run_id: null,
  };
  if (before) {
    filter.$or = [
      { created_at: { $lt: before.created_at } },
      { created_at: before.created_at, _id: { $lt: before._id } },
    ];
  }
  const found = await runsCollection(db)
    .find(filter, { projection: { _id: 1 }, limit: atMost })
    .toArray();
  return found.length;
}

/** Fields the status view needs (everything but the snapshot). */
export const STATUS_PROJECTION = { snapshot: 0 } as const;

/** The liveness reads under way, per database handle and run. */
const liveReads = new WeakMap<Db, Map<string, Promise<boolean>>>();

/**
 * Whether the run has not ended: a read, for an attempt that writes its start only later (recordStepDone). A map's
 * items start many at a time: one that asks while a read of the same run is under way shares it. Its answer is then
 * a few milliseconds older than the question, which changes nothing: a run may end just after any read anyway.
 */
export function isRunLive(db: Db, runId: string): Promise<boolean> {
  let byRun = liveReads.get(db);
  if (!byRun) liveReads.set(db, (byRun = new Map<string, Promise<boolean>>()));
  const under = byRun.get(runId);
  if (under) return under;
  const read = runsCollection(db)
    .findOne({ _id: runId, status: notTerminal }, { projection: { _id: 1 } })
    .then((doc) => doc !== null)
    .finally(() => byRun.delete(runId));
  byRun.set(runId, read);
  return read;
}

/** One run of the owner, or null (unknown id or another user's run). */
export async function findRun(db: Db, ownerId: string, runId: string): Promise<Omit<RunDoc, 'snapshot'> | null> {
  return runsCollection(db).findOne<Omit<RunDoc, 'snapshot'>>(
    { _id: runId, owner_id: ownerId },
    { projection: STATUS_PROJECTION },
  );
}

/**
 * What a step write found: whether it took effect (the run had not ended); the first of the event seqs it allocated
 * for the change (db/run-events.ts: logging it then costs only the insert); and, from the document as it was before,
 * whether the step could be in the approvals inbox (it was waiting, or it is an approval step).
 */
interface StepWrite {
  wrote: boolean;
  firstSeq?: number;
  mayWait?: boolean;
}

/** `events`: how many event seqs to allocate with the write (the changes it will log when it takes effect). */
async function updateStep(
  db: Db,
  runId: string,
  stepId: string,
  update: UpdateFilter<RunDoc>,
  events = 0,
): Promise<StepWrite> {
  const filter: Filter<RunDoc> = { _id: runId, status: notTerminal, 'steps.id': stepId };
  const before = await runsCollection(db).findOneAndUpdate(
    filter,
    events > 0 ? { ...update, $inc: { event_seq: events } } : update,
    { returnDocument: 'before', projection: { event_seq: 1, 'steps.id': 1, 'steps.status': 1 } },
  );
  if (!before) return { wrote: false };
  return {
    wrote: true,
    ...(events > 0 ? { firstSeq: ((before as { event_seq?: number }).event_seq ?? 0) + 1 } : {}),
    mayWait: before.steps.some((s) => s.id === stepId && s.status === 'waiting'),
  };
}

/** A map item or loop iteration (`emails[3]`, `draft#2`), or undefined for a plain step id. */
function innerExecution(execId: string) {
  const parsed = parseExecutionId(execId);
  if (!parsed || parsed.kind === 'step') return undefined;
  return {
    stepId: parsed.stepId,
    execId,
    position: parsed.kind === 'item' ? parsed.index : parsed.iteration,
  };
}

/**
 * A write to an execution inside a map or loop: it goes to `step_executions` (db/step-executions.ts) if the run has
 * not ended; the run's `updated_at` moves so long polls see the progress. The change is logged only when the
 * execution took it (a late write to an ended execution changes nothing). Returns false when the run is terminal.
 */
async function updateExecution(
  db: Db,
  runId: string,
  exec: NonNullable<ReturnType<typeof innerExecution>>,
  set: Parameters<typeof writeExecution>[2],
  opts: { startedAt?: Date; change?: StepChange | StepChange[]; force?: boolean } = {},
): Promise<boolean> {
  const now = new Date();
  const update: UpdateFilter<RunDoc> = opts.startedAt
    ? { $set: { status: 'running', updated_at: now }, $min: { started_at: opts.startedAt } }
    : { $set: { updated_at: now } };
  const events = opts.change === undefined ? 0 : Array.isArray(opts.change) ? opts.change.length : 1;
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal },
    events > 0 ? { ...update, $inc: { event_seq: events } } : update,
    { returnDocument: 'before', projection: { event_seq: 1, 'steps.id': 1, 'steps.action_type': 1 } },
  );
  if (!before) return false;
  const changed = await writeExecution(db, { runId, ...exec }, set, { force: opts.force ?? false });
  if (opts.change) {
    const firstSeq = ((before as { event_seq?: number }).event_seq ?? 0) + 1;
    // The seqs allocated with the run's write hold the changes, or nothing when the execution did not take them.
    if (!changed) for (let i = 0; i < events; i++) await fillEventSeq(db, runId, firstSeq + i);
    else {
      const mayWait = before.steps.some((s) => s.id === exec.stepId && s.action_type === 'approval');
      await afterChange(db, runId, exec.execId, opts.change, { wrote: true, firstSeq, mayWait });
    }
  }
  return true;
}

/**
 * What follows a write that took effect (a write refused because the run ended does neither): the change goes to the
 * event log, and an execution that has ended leaves the approvals inbox (whatever ended it: a decision, a timeout).
 */
async function logged(
  db: Db,
  runId: string,
  execId: string,
  change: StepChange | StepChange[],
  write: StepWrite,
  before: NewRunEvent[] = [],
): Promise<boolean> {
  if (write.wrote) await afterChange(db, runId, execId, change, write, before);
  return write.wrote;
}

/** `found` is what the write saw, when it knows; without it, the inbox is cleared just in case. */
async function afterChange(
  db: Db,
  runId: string,
  execId: string,
  change: StepChange | StepChange[],
  found: StepWrite = { wrote: true },
  before: NewRunEvent[] = [],
): Promise<void> {
  const ends = (Array.isArray(change) ? change : [change]).some(
    (c) => c.type === 'step.completed' || c.type === 'step.failed' || c.type === 'step.skipped',
  );
  if (ends && found.mayWait !== false) await removeApproval(db, runId, execId);
  await logStepChange(db, runId, execId, change, found.firstSeq, before);
}

/**
 * A step attempt has started (called by the step's activity at the start of every attempt). Moves the run to
 * `running`. Returns false when the run is already terminal (the caller may skip its work).
 */
export async function markStepRunning(
  db: Db,
  runId: string,
  stepId: string,
  attempt: number,
  opts: { itemsTotal?: number; input?: JsonValue; progress?: { turn: number; usage: Usage } } = {},
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
  // and never over a terminal one); `waiting` is derived from the steps when shown (temporal/contract/run-state.ts).
  const set: Record<string, unknown> = {
    status: 'running',
    updated_at: now,
    'steps.$.status': 'running',
    'steps.$.attempts': attempt,
  };
  if (attempt <= 1) set['steps.$.started_at'] = now;
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

/** A step waits for a human decision (approval); with its request, the approval is listed in the owner's inbox. */
export async function markStepWaiting(
  db: Db,
  runId: string,
  stepId: string,
  approval?: ApprovalRequest,
): Promise<boolean> {
  const now = new Date();
  const inner = innerExecution(stepId);
  const write: StepWrite = inner
    ? {
        wrote: await updateExecution(
          db,
          runId,
          inner,
          { status: 'waiting', attempts: 1, started_at: now },
          { startedAt: now },
        ),
      }
    : await updateStep(
        db,
        runId,
        stepId,
        {
          $set: {
            updated_at: now,
            'steps.$.status': 'waiting',
            'steps.$.attempts': 1,
            'steps.$.started_at': now,
          },
          $min: { started_at: now },
        },
        1,
      );
  if (write.wrote && approval) {
    const run = await runsCollection(db).findOne(
      { _id: runId },
      { projection: { owner_id: 1, workflow_id: 1, workflow_name: 1 } },
    );
    if (run) await putApproval(db, run, stepId, approval);
  }
  return logged(db, runId, stepId, { type: 'step.waiting' }, write);
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
 * A step attempt that started and finished before its start was written (a pure step; an action that took less than
 * the start-write delay, temporal/activities/action-step.ts): its start, input and completion in one write and its
 * two events in one append, instead of a write when it starts and another when it ends. A map item or loop iteration
 * the same, on its execution document (the run's write allocating both events' seqs).
 */
export async function recordStepDone(
  db: Db,
  runId: string,
  stepId: string,
  done: { attempt: number; startedAt: Date; input?: JsonValue; output: JsonValue | OutputRef },
): Promise<boolean> {
  const changes: StepChange[] = [
    { type: 'step.started', attempt: done.attempt },
    { type: 'step.completed', output: done.output },
  ];
  const inner = innerExecution(stepId);
  if (inner) {
    // A map's items end many at a time: their writes go together (db/execution-commits.ts).
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
  if (done.input !== undefined) set['steps.$.input_json'] = shownInput(done.input);
  const write = await updateStep(db, runId, stepId, { $set: set, $min: { started_at: done.startedAt } }, 2);
  return logged(db, runId, stepId, changes, write);
}

/** A pure step that completed, as recordPureSteps takes it. */
export interface PureStepDone {
  stepId: string;
  attempt: number;
  startedAt: Date;
  input?: JsonValue;
  output: JsonValue | OutputRef;
}

/**
 * Several plain (top-level) pure steps that completed one after another, in one write and one event insert: what
 * recordStepDone does for each, with the events in the order given. Returns false when the run has already ended.
 */
export async function recordPureSteps(db: Db, runId: string, done: PureStepDone[]): Promise<boolean> {
  if (done.length === 0) return true;
  if (done.length === 1 || done.some((d) => innerExecution(d.stepId))) {
    for (const d of done) if (!(await recordStepDone(db, runId, d.stepId, d))) return false;
    return true;
  }
  const now = new Date();
  const { set, arrayFilters } = pureStepsUpdate(done, now);
  set.status = 'running';
  set.updated_at = now;
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal, 'steps.id': { $all: done.map((d) => d.stepId) } },
    { $set: set, $min: { started_at: earliestStart(done) }, $inc: { event_seq: 2 * done.length } },
    { arrayFilters, returnDocument: 'before', projection: { event_seq: 1 } },
  );
  if (!before) return false;
  await logStepChanges(db, runId, pureStepChanges(done), ((before as { event_seq?: number }).event_seq ?? 0) + 1);
  return true;
}

/** The `$set` of each pure step's completion, one array filter per step (`s0`, `s1`, … name their steps by id). */
function pureStepsUpdate(done: PureStepDone[], now: Date) {
  const set: Record<string, unknown> = {};
  const arrayFilters: Record<string, unknown>[] = done.map((d, i) => ({ [`s${i}.id`]: d.stepId }));
  for (const [i, d] of done.entries()) {
    const at = `steps.$[s${i}]`;
    set[`${at}.status`] = 'completed';
    set[`${at}.attempts`] = d.attempt;
    set[`${at}.output_json`] = JSON.stringify(d.output);
    set[`${at}.error`] = null;
    set[`${at}.completed_at`] = now;
    if (d.attempt <= 1) set[`${at}.started_at`] = d.startedAt;
    if (d.input !== undefined) set[`${at}.input_json`] = shownInput(d.input);
  }
  return { set, arrayFilters };
}

const earliestStart = (done: PureStepDone[]) => new Date(Math.min(...done.map((d) => d.startedAt.getTime())));

/** Each pure step's events: started, then completed. */
const pureStepChanges = (done: PureStepDone[]) =>
  done.map((d) => ({
    execId: d.stepId,
    changes: [
      { type: 'step.started', attempt: d.attempt },
      { type: 'step.completed', output: d.output },
    ] satisfies StepChange[],
  }));

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
  await appendRunEvents(db, runId, announce, write.firstSeq);
  return write.wrote;
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
 * Writes the terminal state once; later calls (and calls for an already terminal run) change nothing. The one
 * writer of a run's terminal fields (the workflow's outcome and the worker's reconciler both come here, with an
 * outcome built by deriveOutcome in temporal/contract/run-state.ts).
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
export type EndedRun = Pick<RunDoc, 'status' | 'error' | 'steps' | 'created_at' | 'completed_at' | 'parent_run_id'>;

/** recordRunOutcome, returning the run as its terminal write left it, or null when it was terminal already. */
export async function recordRunEnd(
  db: Db,
  runId: string,
  outcome: RunOutcome,
  at: Date = new Date(),
): Promise<EndedRun | null> {
  const set: Record<string, unknown> = {
    status: outcome.status,
    error: outcome.error,
    updated_at: at,
    completed_at: at,
  };
  const arrayFilters: Record<string, unknown>[] = [];
  const max: Record<string, number> = {};
  setStepUpdates(outcome.stepUpdates ?? [], set, arrayFilters, at, 's', max);
  if (outcome.status !== 'completed') {
    // Map items and loop iterations still open end with the run (a completed run has none open). Closed before the
    // run turns terminal, so no reader ever sees an ended run with items still running; a late write from an item's
    // activity cannot reopen them (terminal executions are never rewritten).
    await closeOpenExecutions(db, runId, executionStopOf(outcome), at);
  }
  // The document as written comes back, so the end is logged from it without reading it again.
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
  // Only approval steps put anything in the inbox.
  if (ended.steps.some((s) => s.action_type === 'approval')) await removeRunApprovals(db, runId);
  // The write allocated the end's seq: the counter as it returned.
  await appendRunEnded(db, runId, runEndedData(ended), (ended as { event_seq?: number }).event_seq ?? 1);
  return ended;
}

/**
 * The last step's completion and the run's `completed` end in one write of the run and one insert of their events,
 * where markStepCompleted and then recordRunEnd make two of each (the run's end is what a waiting client is waiting
 * for). Null when this write did nothing: the run has ended, the step is not a plain step of the run, or the outcome
 * is not a completion. The caller then makes the two writes, which sort out whatever is stored.
 */
export async function recordRunCompletedWithStep(
  db: Db,
  runId: string,
  stepId: string,
  step: { output: JsonValue | OutputRef; usage: Usage; turns?: number; announce?: NewRunEvent[] },
  outcome: RunOutcome,
  at: Date = new Date(),
): Promise<EndedRun | null> {
  // A completed outcome lists every step; this one as completed, which this write says anyway.
  const updates = (outcome.stepUpdates ?? []).filter((u) => !(u.id === stepId && completesPlainly(u)));
  if (outcome.status !== 'completed' || innerExecution(stepId) || updates.some((u) => u.id === stepId)) return null;
  const announce = step.announce ?? [];
  const done = 'steps.$[done]';
  const set: Record<string, unknown> = {
    status: outcome.status,
    error: outcome.error,
    updated_at: at,
    completed_at: at,
    [`${done}.status`]: 'completed',
    [`${done}.output_json`]: JSON.stringify(step.output),
    [`${done}.error`]: null,
    [`${done}.completed_at`]: at,
    [`${done}.usage`]: step.usage,
  };
  if (step.turns !== undefined) set[`${done}.turns`] = step.turns;
  const arrayFilters: Record<string, unknown>[] = [{ 'done.id': stepId }];
  setStepUpdates(updates, set, arrayFilters, at);
  const change: StepChange = { type: 'step.completed', output: step.output, usage: step.usage };
  const events = [...announce, ...stepChangeEvents([{ execId: stepId, changes: [change] }])];
  const ended = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal, 'steps.id': stepId },
    { $set: set, $inc: { event_seq: events.length + 1 } },
    { arrayFilters, returnDocument: 'after', projection: ENDED_PROJECTION },
  );
  if (ended) await afterCompletedEnd(db, runId, ended, events);
  return ended;
}

/**
 * A line of pure steps that ends the run (temporal/activities/pure-step.ts), with the run's `completed` end: one write
 * of the run and one insert of the events, where recordPureSteps and then recordRunEnd make two of each. Null when
 * this write did nothing: the run has ended, a step is not a plain step of the run or is one the outcome updates, or
 * the outcome is not a completion. The caller then makes the two writes, which sort out whatever is stored.
 */
export async function recordRunCompletedWithLine(
  db: Db,
  runId: string,
  done: PureStepDone[],
  outcome: RunOutcome,
  at: Date = new Date(),
): Promise<EndedRun | null> {
  const ids = done.map((d) => d.stepId);
  // A completed outcome lists every step; those of the line as completed, which this write says anyway.
  const updates = (outcome.stepUpdates ?? []).filter((u) => !(ids.includes(u.id) && completesPlainly(u)));
  if (
    outcome.status !== 'completed' ||
    done.length === 0 ||
    ids.some((id) => innerExecution(id) !== undefined || updates.some((u) => u.id === id))
  ) {
    return null;
  }
  const { set, arrayFilters } = pureStepsUpdate(done, at);
  Object.assign(set, { status: outcome.status, error: outcome.error, updated_at: at, completed_at: at });
  setStepUpdates(updates, set, arrayFilters, at, 'u');
  const events = stepChangeEvents(pureStepChanges(done));
  const ended = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal, 'steps.id': { $all: ids } },
    { $set: set, $min: { started_at: earliestStart(done) }, $inc: { event_seq: events.length + 1 } },
    { arrayFilters, returnDocument: 'after', projection: ENDED_PROJECTION },
  );
  if (ended) await afterCompletedEnd(db, runId, ended, events);
  return ended;
}

/** The outcome's step updates into `set`, one array filter each (`<name>0`, `<name>1`, … name their steps by id). */
function setStepUpdates(
  updates: NonNullable<RunOutcome['stepUpdates']>,
  set: Record<string, unknown>,
  arrayFilters: Record<string, unknown>[],
  at: Date,
  name = 's',
  max: Record<string, number> = {},
): void {
  updates.forEach((u, i) => {
    const step = `steps.$[${name}${i}]`;
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
    }
    arrayFilters.push({ [`${name}${i}.id`]: u.id });
  });
}

/**
 * After a write that completed the run with its last steps: the approvals inbox, and the steps' events then
 * `run.ended` at the seqs the write allocated (the counter as it returned is the end's).
 */
async function afterCompletedEnd(db: Db, runId: string, ended: EndedRun, events: NewRunEvent[]): Promise<void> {
  if (ended.steps.some((s) => s.action_type === 'approval')) await removeRunApprovals(db, runId);
  const last = (ended as { event_seq?: number }).event_seq ?? events.length + 1;
  await appendRunEvents(db, runId, [...events, runEndedEvent(runEndedData(ended))], last - events.length);
}

/** An outcome's update that only says the step completed (deriveOutcome lists every step so). */
const completesPlainly = (u: NonNullable<RunOutcome['stepUpdates']>[number]) =>
  u.status === 'completed' && u.error == null && u.skip_reason === undefined;

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
} as const;

/** Logs `run.ended` from the run's terminal document (a no-op when it is not terminal or was logged before). */
export async function logRunEnded(db: Db, runId: string): Promise<void> {
  const run = await runsCollection(db).findOne({ _id: runId }, { projection: ENDED_PROJECTION });
  if (!run || !isTerminal(run.status)) return;
  await appendRunEnded(db, runId, runEndedData(run));
}

function runEndedData(run: Pick<RunDoc, 'status' | 'error' | 'steps'>): RunEndedData {
  const usage = { ...ZERO_USAGE };
  for (const s of run.steps) {
    usage.llm_calls += s.usage.llm_calls;
    usage.input_tokens += s.usage.input_tokens;
    usage.output_tokens += s.usage.output_tokens;
  }
  return {
    status: run.status,
    error: run.error ? { ...run.error } : null,
    usage,
    steps: run.steps.map((s) => ({ id: s.id, status: s.status })),
  };
}

/** How an ending closes the executions it finds open: as its steps (temporal/contract/run-state.ts stopReason). */
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
