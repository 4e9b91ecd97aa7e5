/**
 * The `runs` collection: one document per run — its shape, its creation by the API (and by a sub-workflow step for a
 * child run) and the reads by id and by owner. What changes a run after its creation is written by the worker,
 * through the workflow's activities only: step and execution states (./step-states.ts) and the run's end
 * (./run-end.ts), the first of them with Temporal's run id; the worker's reconciler (temporal/reconciler.ts) writes
 * what the workflow could not. The API writes a run only around its start, through the functions below: the record,
 * the record's removal when the start is refused before Temporal hears of it, and a rerun's link on the run it
 * repeats. Every later write is conditional on the run not being terminal, so a late or retried write never turns a
 * finished run back into a running one.
 */
import { loadedSchema, storedSchema } from './schema-keys';
import type { Db, Filter } from 'mongodb';
import type { ActionType } from '../domain/action-types';
import type { JsonObject } from '../domain/json';
import type { RunOutcome, StepError } from '../domain/steps';
import {
  IN_FLIGHT_RUN_STATUSES,
  TERMINAL_RUN_STATUSES,
  type RunBudget,
  type RunError,
  type RunSnapshot,
  type RunStatus,
  type StepSnapshot,
  type StepStatus,
  type Usage,
} from '../domain/run';

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
  /** Sub-workflow steps: the child run's id (also a run of its own, read at `GET …/runs/:runId/status`). */
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
  /**
   * Agent steps: why MCP tools are missing from what the model was shown (a server that could not be listed, a tool
   * over a bound), as the transcript's `mcp_problems` has them (db/step-warnings.ts). Absent when there were none.
   */
  mcp_problems?: string[];
  /** An agent step waiting for a decision: the tool call it waits for (db/step-waits.ts markAgentWaiting). */
  waiting_call?: string | null;
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
  /**
   * Temporal's run id of the execution; null until the worker's first write of the run (a step's start or end, the
   * run's end) records it. Not null: Temporal started the run. Null: not started, or started and not yet picked up.
   */
  run_id: string | null;
}

/** Whether an open run is progressing, as a status read computes it from Temporal's describe (never stored). */
export interface RunLiveness {
  checked_at: Date;
  /**
   * True when Temporal has work for this run that no worker has picked up for a while (e.g. every worker down), or
   * when the run's workflow task keeps failing (Temporal retries it without end).
   */
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
  /** Set by a repeated request that starts the run itself (shared/runs/create-run.ts): the first no longer removes it. */
  start_claimed?: boolean;
  /** The trace of the request that started the run (shared/tracing.ts); absent when tracing was off. */
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
  /** A thread's turn (db/threads.ts): the thread and the turn number; absent on every other run. */
  thread_id?: string | null;
  thread_turn?: number;
  /** A run of an experiment's item (db/experiments.ts): the experiment's id; absent on other runs. */
  experiment_id?: string | null;
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

/** The filter of a run that has not ended: every write after creation is conditional on it. */
export const notTerminal = { $nin: [...TERMINAL_RUN_STATUSES] };

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

/** Removes a run's record that Temporal has not heard of (a start refused after the record was written). */
export async function removeUnstartedRun(db: Db, runId: string): Promise<boolean> {
  const res = await runsCollection(db).deleteOne({ _id: runId, 'temporal.run_id': null, start_claimed: { $ne: true } });
  return res.deletedCount === 1;
}

/** A repeated start takes over a recorded run's start: from then on the first request no longer removes it. */
export async function claimRunStart(db: Db, runId: string): Promise<boolean> {
  const res = await runsCollection(db).updateOne({ _id: runId }, { $set: { start_claimed: true } });
  return res.matchedCount === 1;
}

/** The whole record of the caller's run, snapshot included (a repeated start resumes from it). */
export async function findRunRecord(db: Db, ownerId: string, runId: string): Promise<RunDoc | null> {
  return runsCollection(db).findOne({ _id: runId, owner_id: ownerId });
}

/** Links a rerun to the run it repeats (the source's `reruns`). */
export async function addRerun(db: Db, sourceRunId: string, rerunId: string): Promise<void> {
  await runsCollection(db).updateOne({ _id: sourceRunId }, { $addToSet: { reruns: rerunId } });
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

/** One run of the owner, or null (unknown id or another user's run). */
export async function findRun(db: Db, ownerId: string, runId: string): Promise<Omit<RunDoc, 'snapshot'> | null> {
  return runsCollection(db).findOne<Omit<RunDoc, 'snapshot'>>(
    { _id: runId, owner_id: ownerId },
    { projection: STATUS_PROJECTION },
  );
}

/** The liveness reads under way, per database handle and run. */
const liveReads = new WeakMap<Db, Map<string, Promise<boolean>>>();

/**
 * Whether the run has not ended: checked before an action's side effect when its start is written only later. A
 * map's items start many at a time: one that asks while a read of the same run is under way shares it (its answer is
 * then a few milliseconds older than the question, which changes nothing: a run may end just after any read anyway).
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
