/**
 * The one way a run is created, whoever asks: a start through the API (POST …/run, rerun, MCP, an inbound hook) or a
 * schedule's fire in the worker. It applies, in one place and in this order, the caller's run-start quota, the
 * `Idempotency-Key` (or the run id Temporal fixed), the snapshot's size limit, the record, the concurrent-runs limit
 * and the Temporal start. The run's budget is in its snapshot (./budget.ts, applied by ./snapshot.ts).
 *
 * The record is inserted `queued` before Temporal hears of the run (the workflow's progress writes need it, and a
 * repeated request finds it), then admitted by the concurrent-runs limit, then started (workflow id = run id). A start
 * refused by the limit or by Temporal leaves no record for an API caller, who is told; a scheduled run's execution
 * exists already, so its refused record is kept for the caller to end as failed.
 *
 * A repeated request (same key) or a retried attempt (same run id) never waits for the first: it reads what exists
 * and finishes it. A recorded run Temporal has not started yet is admitted again and started again: Temporal's
 * workflow-id uniqueness makes the second start find the first (WorkflowExecutionAlreadyStartedError), so there is
 * one execution whoever gets there first. Before starting, a repeated request marks the record `start_claimed`; the
 * first request removes a refused record only without that mark, so it never removes a run someone else started.
 */
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { isDuplicateKey } from '../../db/duplicate-key';
import { newId } from '../../db/ids';
import { claimKey, findClaim, releaseKey, type IdempotencyDoc } from '../../db/idempotency';
import {
  claimRunStart,
  findRunRecord,
  insertRun,
  isTerminal,
  loadedSnapshot,
  newRunDoc,
  removeUnstartedRun,
  type RunDoc,
} from '../../db/runs';
import type { RunSnapshot } from '../../domain/run';
import { withTraceId } from '../run-trace';
import { holdsConcurrentSlot } from './concurrent-limit';
import { MAX_SNAPSHOT_BYTES } from './snapshot';

/** A key's claim older than this whose run was never recorded is an interrupted start: a repeat starts afresh. */
const STALE_CLAIM_MS = 30_000;

export type RunRefusalReason = 'too_large' | 'concurrent_runs_exceeded' | 'idempotency_mismatch' | 'in_flight';

/** A run start refused by a limit or by its key; each caller turns it into its own answer (API error, failed run). */
export class RunRefusedError extends Error {
  constructor(
    readonly reason: RunRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'RunRefusedError';
  }
}

export interface PreparedRun {
  snapshot: RunSnapshot;
  timeoutSeconds?: number | undefined;
  /** Changes to the new run's document before it is stored (a rerun's reused steps, a scheduled run's execution). */
  adjust?: (doc: RunDoc) => RunDoc;
}

export interface CreateRunRequest {
  ownerId: string;
  /** Fixed before the run exists (a scheduled run's: its Temporal workflow id); a new id otherwise. */
  runId?: string;
  /** The `Idempotency-Key` and a hash of the request it was sent with (same key, other hash: refused). */
  idempotency?: { key: string; requestHash: string } | undefined;
  /** Takes one start from the caller's run-start quota; throws when it is spent. */
  charge?: (() => Promise<void>) | undefined;
  /** The new run's snapshot (`runId` is its id); throws to refuse. Not called when the run exists already. */
  prepare(runId: string, now: Date): Promise<PreparedRun>;
  /** A record the concurrent-runs limit refuses: removed (the API's caller is told) or kept (a scheduled run's). */
  onRefused: 'remove' | 'keep';
  /** Idempotent work once the run is recorded and admitted, before its start (and again on a repeat). */
  beforeStart?: ((doc: RunDoc) => Promise<void>) | undefined;
  /** Temporal's start, idempotent by workflow id; absent when Temporal started the run itself (a schedule's fire). */
  start?: ((doc: RunDoc, snapshot: RunSnapshot) => Promise<void>) | undefined;
  /** Idempotent work once the run is started (and again on a repeat). */
  afterStart?: ((doc: RunDoc) => Promise<void>) | undefined;
}

export interface CreatedRun {
  doc: RunDoc;
  /** False when an earlier request with the key, or an earlier attempt with the run id, created it. */
  created: boolean;
}

export interface CreateRunDeps {
  db: Db;
  config: Pick<Config, 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TASK_QUEUE' | 'USER_MAX_CONCURRENT_RUNS'>;
}

export async function createRun(deps: CreateRunDeps, req: CreateRunRequest): Promise<CreatedRun> {
  await req.charge?.();
  const key = req.idempotency;
  if (key) {
    const claim = await findClaim(deps.db, req.ownerId, key.key);
    if (claim) return repeat(deps, req, claim);
  } else if (req.runId !== undefined) {
    const existing = await findRun(deps, req.ownerId, req.runId);
    if (existing) return resume(deps, req, existing);
  }
  const now = new Date();
  const prepared = await req.prepare(req.runId ?? newId('run'), now);
  const { snapshot } = prepared;
  const bytes = Buffer.byteLength(JSON.stringify(snapshot), 'utf8');
  if (bytes > MAX_SNAPSHOT_BYTES) {
    throw new RunRefusedError('too_large', `the run snapshot is ${bytes} bytes; the limit is ${MAX_SNAPSHOT_BYTES}`);
  }
  if (key) {
    // Exactly one of concurrent duplicates gets the claim; the others answer from it.
    const claim = await claimKey(deps.db, {
      ownerId: req.ownerId,
      key: key.key,
      requestHash: key.requestHash,
      runId: snapshot.run_id,
      now,
    });
    if (!claim.claimed) {
      if (!claim.existing) throw inFlight();
      return repeat(deps, req, claim.existing);
    }
  }
  const fresh = newRunDoc({
    snapshot,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    idempotencyKey: key?.key,
    timeoutSeconds: prepared.timeoutSeconds,
    now,
  });
  const doc = withTraceId(prepared.adjust ? prepared.adjust(fresh) : fresh);
  try {
    await insertRun(deps.db, doc);
  } catch (err) {
    if (!isDuplicateKey(err) || req.runId === undefined) throw err;
    // A fixed run id recorded meanwhile by another attempt: go on from its record.
    const existing = await findRun(deps, req.ownerId, req.runId);
    if (!existing) throw err;
    return resume(deps, req, existing);
  }
  try {
    if (!(await holdsConcurrentSlot(deps.db, doc, deps.config.USER_MAX_CONCURRENT_RUNS))) {
      // Admitted after all when a repeated request claimed the start meanwhile: it counted its own way.
      if (req.onRefused === 'keep' || (await removeUnclaimed(deps, doc))) throw concurrentRefusal(deps);
    }
    await req.beforeStart?.(doc);
    if (req.start) await startOrRemove(deps, req, doc, snapshot);
  } catch (err) {
    if (key) await releaseKey(deps.db, req.ownerId, key.key, doc._id).catch(() => undefined);
    throw err;
  }
  await req.afterStart?.(doc);
  return { doc, created: true };
}

/** Temporal's start; when it fails, the record of a run nobody was told about goes (unless a repeat claimed it). */
async function startOrRemove(deps: CreateRunDeps, req: CreateRunRequest, doc: RunDoc, snapshot: RunSnapshot) {
  try {
    await req.start?.(doc, snapshot);
  } catch (err) {
    await removeUnclaimed(deps, doc).catch(() => false);
    throw err;
  }
}

/** Same key again: same request → the run it created; another request → refused; its run not yet recorded → 409. */
async function repeat(deps: CreateRunDeps, req: CreateRunRequest, claim: IdempotencyDoc): Promise<CreatedRun> {
  if (claim.request_hash !== req.idempotency?.requestHash) {
    throw new RunRefusedError('idempotency_mismatch', 'Idempotency-Key was already used with a different request body');
  }
  const doc = await findRun(deps, req.ownerId, claim.run_id);
  if (doc) return resume(deps, req, doc);
  if (Date.now() - claim.created_at.getTime() < STALE_CLAIM_MS) throw inFlight();
  // The claiming request stopped before recording its run: give the key up and start afresh (charged already).
  await releaseKey(deps.db, req.ownerId, req.idempotency.key, claim.run_id);
  return createRun(deps, { ...req, charge: undefined });
}

/**
 * A run an earlier request or attempt recorded: as it is when it has started (or ended); otherwise admitted and
 * started again, which finds the first start if there was one (workflow id = run id).
 */
async function resume(deps: CreateRunDeps, req: CreateRunRequest, doc: RunDoc): Promise<CreatedRun> {
  // A schedule's record carries its execution's id from the first write: for it, only leaving `queued` says admitted.
  const started =
    isTerminal(doc.status) || doc.status !== 'queued' || (req.start !== undefined && doc.temporal.run_id !== null);
  if (!started) {
    if (!(await holdsConcurrentSlot(deps.db, doc, deps.config.USER_MAX_CONCURRENT_RUNS))) {
      throw concurrentRefusal(deps);
    }
    if (req.start) {
      // From here the first request no longer removes the record; gone already: it was refused (or never started).
      if (!(await claimRunStart(deps.db, doc._id))) throw concurrentRefusal(deps);
    }
    await req.beforeStart?.(doc);
    // The record holds the snapshot in its stored form (schema keys escaped).
    await req.start?.(doc, loadedSnapshot(doc));
  }
  await req.afterStart?.(doc);
  return { doc, created: false };
}

const findRun = (deps: CreateRunDeps, ownerId: string, runId: string) => findRunRecord(deps.db, ownerId, runId);

/** Removes a record Temporal has not heard of, unless a repeated request claimed its start; true when removed. */
const removeUnclaimed = (deps: CreateRunDeps, doc: RunDoc) => removeUnstartedRun(deps.db, doc._id);

function concurrentRefusal(deps: CreateRunDeps): RunRefusedError {
  const limit = deps.config.USER_MAX_CONCURRENT_RUNS;
  return new RunRefusedError(
    'concurrent_runs_exceeded',
    `the owner already has ${limit} runs in flight (USER_MAX_CONCURRENT_RUNS)`,
  );
}

const inFlight = () =>
  new RunRefusedError('in_flight', 'a request with this Idempotency-Key is still in flight; retry shortly');
