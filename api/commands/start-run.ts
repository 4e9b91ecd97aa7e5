/**
 * Endpoint 7's command, and the one start path every run the API makes goes through (rerun and inbound hooks too):
 * validate the input, claim the idempotency key, record the run, admit it (the concurrent-runs limit), start the
 * Temporal workflow (workflow id = run id), and answer 202 once Temporal has it. Order matters for "nothing
 * half-written": the record is created `queued` first (so the workflow's progress writes find it and a retried
 * idempotent request finds the run), and removed again when the limit or Temporal refuses the start — an unreachable
 * Temporal is a 503 that leaves no run behind.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { newId } from '../../db/ids';
import { claimKey, findClaim, releaseKey, type IdempotencyDoc } from '../../db/idempotency';
import {
  insertRun,
  isTerminal,
  loadedSnapshot,
  newRunDoc,
  removeUnstartedRun,
  runsCollection,
  type RunDoc,
} from '../../db/runs';
import { findWorkflow } from '../../db/workflows';
import { canonicalJson, type JsonObject } from '../../domain/json';
import type { RunSnapshot, RunStatus } from '../../domain/run';
import {
  ConcurrentRunsExceededError,
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  UnprocessableError,
} from '../errors';
import { statusUrlOf } from '../caller';
import { isTemporalUnavailable } from '../infra-errors';
import { checkCallbackUrl } from './callback-url';
import type { InputValidators } from './input-validators';
import { buildSnapshot, MAX_SNAPSHOT_BYTES } from '../../shared/runs/snapshot';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import { holdsConcurrentSlot } from '../../shared/runs/concurrent-limit';
import type { ApiMetrics } from '../metrics';
import { runKindOf } from '../../shared/metrics/run-kind';
import { withTraceId } from '../../shared/run-trace';
import type { WorkflowDoc } from '../../db/workflows';
import type { SnapshotSources } from '../../shared/runs/snapshot';
import { startExecution } from './start-execution';

/** A record older than this without a confirmed start is an interrupted start that a retried request may finish. */
const STALE_START_MS = 30_000;
/** How long a repeated request waits for the first one's start before answering 409, and how often it looks. */
const REPLAY_WAIT_MS = 2_000;
const REPLAY_POLL_MS = 20;
/** Retry-After of a start refused for too many runs in flight: runs take seconds to minutes, so ask again soon. */
const CONCURRENT_RETRY_AFTER_SECONDS = 10;

export interface StartRunDeps {
  config: Config;
  db: Db;
  temporal: Client;
  inputValidators: InputValidators;
  apiMetrics?: ApiMetrics;
}

export interface StartRunRequest {
  ownerId: string;
  workflowId: string;
  input: JsonObject | undefined;
  /** The start body's callback_url (replaces the workflow config's). */
  callbackUrl?: string;
  idempotencyKey: string | undefined;
  /** Absolute base for status_url (PUBLIC_URL or the request origin). */
  baseUrl: string;
  /**
   * Takes one run start from the caller's budget (429 when spent); called once the workflow is found.
   */
  chargeRunStart?: () => Promise<void>;
}

export interface StartedRun {
  run_id: string;
  workflow_id: string;
  status: RunStatus;
  status_url: string;
}

export async function startRun(deps: StartRunDeps, req: StartRunRequest): Promise<StartedRun> {
  const stored = await readStartSources(deps, req.ownerId, req.workflowId);
  if (!stored) throw new NotFoundError(`workflow ${req.workflowId} not found`);
  await req.chargeRunStart?.();
  return launchRun(deps, launchRequestOf(req), {
    prepare: async (runId, now) => {
      // Checked here rather than before: an idempotent replay answers as the first request was answered.
      if ('problem' in stored) throw new UnprocessableError(stored.problem, 'workflow_invalid');
      return prepareRun(deps, req, stored, runId, now);
    },
    again: () => startRun(deps, { ...req, chargeRunStart: undefined }), // charged already
  });
}

/** A workflow as a start reads it, with everything its runs' snapshots are built from. */
interface StartSources {
  workflow: WorkflowDoc;
  sources: SnapshotSources;
}

/**
 * What a start reads: the owner's workflow and the sources its runs are built from, as stored; null when the owner
 * has no such workflow, a problem naming the step when it can no longer run.
 */
async function readStartSources(
  deps: StartRunDeps,
  ownerId: string,
  workflowId: string,
): Promise<StartSources | { problem: string } | null> {
  const workflow = await findWorkflow(deps.db, ownerId, workflowId);
  if (!workflow) return null;
  const loaded = await loadSnapshotSources(deps.db, ownerId, workflow, deps.config.SUBWORKFLOW_MAX_DEPTH);
  return loaded.ok ? { workflow, sources: loaded.sources } : loaded;
}

/** The run's snapshot from `read`, once the input and the callback URL pass. */
function prepareRun(
  deps: StartRunDeps,
  req: StartRunRequest,
  read: StartSources,
  runId: string,
  now: Date,
): PreparedRun {
  const { workflow, sources } = read;
  const input = req.input ?? {};
  deps.inputValidators.check(workflow, input);
  const callbackUrl = req.callbackUrl ?? workflow.config.callback_url;
  // Checked again at start: HTTP_ALLOWED_HOSTS may have changed since the workflow was saved.
  checkCallbackUrl(
    callbackUrl,
    deps.config.HTTP_ALLOWED_HOSTS,
    req.callbackUrl !== undefined ? 'callback_url' : 'config.callback_url',
  );
  const snapshot = buildSnapshot({
    runId,
    workflow,
    sources,
    input,
    config: deps.config,
    now,
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
  });
  return { snapshot, timeoutSeconds: workflow.config.timeout_seconds };
}

function launchRequestOf(req: StartRunRequest): LaunchRequest {
  return {
    ...req,
    // A callback URL is hashed only when given, so keys claimed by requests without one keep their hash.
    requestHash: hashRequest({
      workflow_id: req.workflowId,
      input: req.input ?? null,
      ...(req.callbackUrl !== undefined ? { callback_url: req.callbackUrl } : {}),
    }),
  };
}

/** A run start as endpoint 7 and rerun share it: who asks, with which key, and a hash of what they asked. */
export interface LaunchRequest {
  ownerId: string;
  idempotencyKey: string | undefined;
  baseUrl: string;
  /** Same key with another hash: 422. */
  requestHash: string;
}

export interface PreparedRun {
  snapshot: RunSnapshot;
  timeoutSeconds?: number | undefined;
  /** Changes to the new run's document before it is stored (a rerun's reused steps). */
  adjust?: (doc: RunDoc) => RunDoc;
}

export interface LaunchSteps {
  /** Builds the run's snapshot (the run id is new); may refuse with an ApiError. */
  prepare(runId: string, now: Date): Promise<PreparedRun>;
  /** Idempotent work once the run is recorded and within the limits, before Temporal starts it (and on a retry). */
  beforeStart?(doc: RunDoc): Promise<void>;
  /** Idempotent work once the run is acknowledged (recorded and admitted; and on a retry). */
  afterStart?(doc: RunDoc): Promise<void>;
  /** The whole request again (its key's claimant stopped before recording a run). */
  again(): Promise<StartedRun>;
}

/**
 * Claim the idempotency key, record the run, check the concurrent-runs limit, start the Temporal workflow (workflow
 * id = run id), answer. The record is created `queued` first and removed again when the limit or Temporal refuses.
 */
export async function launchRun(deps: StartRunDeps, req: LaunchRequest, steps: LaunchSteps): Promise<StartedRun> {
  const key = req.idempotencyKey;
  if (key !== undefined) {
    const existing = await findClaim(deps.db, req.ownerId, key);
    if (existing) return replay(deps, req, existing, steps);
  }
  const now = new Date();
  const prepared = await steps.prepare(newId('run'), now);
  const { snapshot } = prepared;
  const bytes = Buffer.byteLength(JSON.stringify(snapshot), 'utf8');
  if (bytes > MAX_SNAPSHOT_BYTES) {
    throw new UnprocessableError(`the run snapshot is ${bytes} bytes; the limit is ${MAX_SNAPSHOT_BYTES}`, 'too_large');
  }
  if (key !== undefined) {
    // Exactly one of concurrent duplicates gets the claim; the others answer from it.
    const claim = await claimKey(deps.db, {
      ownerId: req.ownerId,
      key,
      runId: snapshot.run_id,
      requestHash: req.requestHash,
      now,
    });
    if (!claim.claimed) {
      if (!claim.existing)
        throw new ConflictError('a request with this Idempotency-Key is still in flight; retry shortly');
      return replay(deps, req, claim.existing, steps);
    }
  }
  const fresh = newRunDoc({
    snapshot,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    idempotencyKey: key,
    timeoutSeconds: prepared.timeoutSeconds,
    now,
  });
  const doc = withTraceId(prepared.adjust ? prepared.adjust(fresh) : fresh);
  try {
    await insertRun(deps.db, doc);
    await refuseBeyondConcurrentLimit(deps, doc);
    await steps.beforeStart?.(doc);
    await startOrRemove(deps, doc, snapshot);
  } catch (err) {
    if (key !== undefined) await releaseKey(deps.db, req.ownerId, key, doc._id).catch(() => undefined);
    throw err;
  }
  await steps.afterStart?.(doc);
  deps.apiMetrics?.runStarted(runKindOf(snapshot.steps));
  return accepted(req, doc);
}

/**
 * Starts the recorded run's execution; when Temporal does not take it, the record of a run nobody was told about is
 * removed again (unreachable: a 503).
 */
async function startOrRemove(deps: StartRunDeps, doc: RunDoc, snapshot: RunSnapshot): Promise<void> {
  try {
    await startExecution(deps, doc, snapshot);
  } catch (err) {
    await removeUnstarted(deps, doc).catch(() => undefined);
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    throw err;
  }
}

/**
 * USER_MAX_CONCURRENT_RUNS (shared/runs/concurrent-limit.ts): a refused run's record is removed before Temporal ever
 * hears of it.
 */
async function refuseBeyondConcurrentLimit(deps: StartRunDeps, doc: RunDoc): Promise<void> {
  const limit = deps.config.USER_MAX_CONCURRENT_RUNS;
  if (await holdsConcurrentSlot(deps.db, doc, limit)) return;
  await removeUnstarted(deps, doc);
  throw new ConcurrentRunsExceededError(limit, CONCURRENT_RETRY_AFTER_SECONDS);
}

/** Removes a run's record that Temporal has not heard of (a refused start). */
async function removeUnstarted(deps: StartRunDeps, doc: RunDoc): Promise<void> {
  await removeUnstartedRun(deps.db, doc._id);
}

function accepted(req: Pick<LaunchRequest, 'baseUrl'>, doc: Pick<RunDoc, '_id' | 'workflow_id'>): StartedRun {
  return {
    run_id: doc._id,
    workflow_id: doc.workflow_id,
    status: 'queued',
    status_url: statusUrlOf(req.baseUrl, doc._id),
  };
}

/** Same key again: same body → the same answer; other body → 422; first request still starting → 409. */
async function replay(
  deps: StartRunDeps,
  req: LaunchRequest,
  claim: IdempotencyDoc,
  steps: LaunchSteps,
): Promise<StartedRun> {
  if (claim.request_hash !== req.requestHash) {
    throw new UnprocessableError(
      'Idempotency-Key was already used with a different request body',
      'idempotency_mismatch',
    );
  }
  deps.apiMetrics?.idempotentReplay();
  const fresh = Date.now() - claim.created_at.getTime() < STALE_START_MS;
  // A first request still starting usually has its answer within milliseconds: wait for it rather than answer 409.
  const doc = fresh ? await waitForStart(deps, req.ownerId, claim.run_id) : await findClaimedRun(deps, req, claim);
  if (doc && hasStarted(doc)) {
    await steps.afterStart?.(doc);
    return accepted(req, doc);
  }
  if (fresh) throw new ConflictError('a request with this Idempotency-Key is still in flight; retry shortly');
  if (!doc) {
    // The claiming request stopped before recording its run: give the key up and start afresh.
    await releaseKey(deps.db, req.ownerId, req.idempotencyKey ?? '', claim.run_id);
    return steps.again();
  }
  // The first request stopped between recording and confirming (a crash): finish its start. Starting is idempotent
  // by workflow id, so this cannot create a second execution.
  // The document read back holds the snapshot in its stored form (schema keys escaped).
  await steps.beforeStart?.(doc);
  try {
    await startExecution(deps, doc, loadedSnapshot(doc));
  } catch (err) {
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    throw err;
  }
  await steps.afterStart?.(doc);
  return accepted(req, doc);
}

/** Temporal has the run (its run id is recorded), or it has ended. */
const hasStarted = (doc: RunDoc) => doc.temporal.run_id !== null || isTerminal(doc.status);

const findClaimedRun = (deps: StartRunDeps, req: Pick<LaunchRequest, 'ownerId'>, claim: IdempotencyDoc) =>
  runsCollection(deps.db).findOne({ _id: claim.run_id, owner_id: req.ownerId });

/** The claimed run once it has started, or as it is after REPLAY_WAIT_MS (null: not recorded, or refused). */
async function waitForStart(deps: StartRunDeps, ownerId: string, runId: string): Promise<RunDoc | null> {
  const until = Date.now() + REPLAY_WAIT_MS;
  for (;;) {
    const doc = await runsCollection(deps.db).findOne({ _id: runId, owner_id: ownerId });
    if ((doc && hasStarted(doc)) || Date.now() >= until) return doc;
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
  }
}

/** Canonical JSON (sorted keys) so that the same body in another key order counts as the same request. */
export function hashRequest(request: JsonObject): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
