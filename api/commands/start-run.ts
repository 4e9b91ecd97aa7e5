/**
 * Endpoint 7's command: validate the input, claim the idempotency key, record the run, admit it (the concurrent-runs
 * limit), start the Temporal workflow (workflow id = run id), confirm. Order matters for "no record left claiming a
 * run exists": the record is created `queued` first (so a crash after the start still leaves a findable run) and
 * removed again when the limit or an unreachable Temporal refuses it. While Temporal answers, the start itself goes
 * on behind the answer (./execution-starts.ts). A workflow this process has started before is started from what that
 * start read, read again while the run is recorded (./recent-sources.ts): one round trip less, nothing stale.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import { newId } from '../../db/ids';
import { claimKey, findClaim, releaseKey, type IdempotencyDoc } from '../../db/idempotency';
import { insertRun, isTerminal, loadedSnapshot, newRunDoc, runsCollection, type RunDoc } from '../../db/runs';
import { findVisibleTemplates } from '../../db/templates';
import { findWorkflow } from '../../db/workflows';
import type { JsonObject } from '../../temporal/contract/json';
import type { RunSnapshot, RunStatus } from '../../temporal/contract/run';
import { ApiError, ConcurrentRunsExceededError, ConflictError, NotFoundError, UnprocessableError } from '../errors';
import type { ExecutionStarts } from './execution-starts';
import { checkCallbackUrl } from './callback-url';
import type { InputValidators } from './input-validators';
import { buildSnapshot, MAX_SNAPSHOT_BYTES } from '../../runtime/runs/snapshot';
import { loadSnapshotSources } from '../../runtime/runs/snapshot-sources';
import { holdsConcurrentSlot } from '../../runtime/runs/concurrent-limit';
import type { ApiMetrics } from '../../runtime/metrics/api-metrics';
import { runKindOf } from '../../runtime/metrics/run-kind';
import { withTraceId } from '../../runtime/run-trace';
import { sameSources, type RecentSources, type StartSources } from './recent-sources';

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
  /** Starts the runs' Temporal executions, before or just behind the answer (./execution-starts.ts). */
  starts: ExecutionStarts;
  apiMetrics?: ApiMetrics;
  /** What this process's last start of each workflow read, to start from at once (./recent-sources.ts). */
  recentSources?: RecentSources;
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
   * Takes one run start from the caller's budget (429 when spent); called once the workflow is found (or known to this
   * process from an earlier start).
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
  // A request with an idempotency key waits for its claim first anyway: it reads the workflow as stored.
  const recent = req.idempotencyKey === undefined ? deps.recentSources?.get(req.ownerId, req.workflowId) : undefined;
  if (!recent) return startFromStored(deps, req);
  await req.chargeRunStart?.();
  // Charged already; when the workflow changed since (or is gone), the start begins again from what is stored now.
  return (await startFromRecent(deps, req, recent)) ?? startFromStored(deps, { ...req, chargeRunStart: undefined });
}

/** A start from the workflow, its templates and sub-workflows as read now. */
async function startFromStored(deps: StartRunDeps, req: StartRunRequest): Promise<StartedRun> {
  const stored = await readStartSources(deps, req.ownerId, req.workflowId);
  if (!stored) throw new NotFoundError(`workflow ${req.workflowId} not found`);
  await req.chargeRunStart?.();
  return launchRun(deps, launchRequestOf(req), {
    prepare: async (runId, now) => {
      // Checked here rather than before: an idempotent replay answers as the first request was answered.
      if ('problem' in stored) throw new UnprocessableError(stored.problem, 'workflow_invalid');
      deps.recentSources?.remember(req.ownerId, stored);
      return prepareRun(deps, req, stored, runId, now);
    },
    again: () => startRun(deps, { ...req, chargeRunStart: undefined }), // charged already
  });
}

/**
 * A start built from what the workflow's last start in this process read (./recent-sources.ts), read again while the
 * run is recorded. Undefined when that is no longer what is stored, or when it refuses the start (what is stored may
 * not): the caller then starts from what is stored.
 */
async function startFromRecent(
  deps: StartRunDeps,
  req: StartRunRequest,
  recent: StartSources,
): Promise<StartedRun | undefined> {
  try {
    return await launchRun(deps, launchRequestOf(req), {
      prepare: async (runId, now) => prepareRun(deps, req, recent, runId, now),
      recheck: async () => {
        const stored = await readStartSources(deps, req.ownerId, req.workflowId);
        return stored !== null && !('problem' in stored) && sameSources(recent, stored);
      },
      again: () => startRun(deps, { ...req, chargeRunStart: undefined }), // charged already
    });
  } catch (err) {
    if (!(err instanceof StaleSourcesError)) throw err;
    deps.recentSources?.forget(req.workflowId);
    return undefined;
  }
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
  // The templates the workflow used last time are read alongside it; loadSnapshotSources checks they still suffice.
  const hinted = deps.recentSources?.templateIdsOf(workflowId);
  const [workflow, prefetched] = await Promise.all([
    findWorkflow(deps.db, ownerId, workflowId),
    hinted ? findVisibleTemplates(deps.db, ownerId, hinted) : undefined,
  ]);
  if (!workflow) return null;
  const loaded = await loadSnapshotSources(
    deps.db,
    ownerId,
    workflow,
    deps.config.SUBWORKFLOW_MAX_DEPTH,
    hinted && prefetched ? { ids: hinted, templates: prefetched } : undefined,
  );
  return loaded.ok ? { workflow, sources: loaded.sources, templateIds: loaded.templateIds } : loaded;
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
  /**
   * Reads what prepare() builds from again (called as the launch begins, awaited once the run is recorded): false when
   * it is no longer what is stored. The record is then removed and the launch throws StaleSourcesError, as it does
   * when prepare() (or the snapshot's size) refuses: the caller starts again from what is stored. Without it,
   * prepare() uses what was read for this request.
   */
  recheck?(): Promise<boolean>;
  /** Idempotent work once the run is recorded and within the limits, before Temporal starts it (and on a retry). */
  beforeStart?(doc: RunDoc): Promise<void>;
  /** Idempotent work once the run is acknowledged (recorded and admitted; and on a retry). */
  afterStart?(doc: RunDoc): Promise<void>;
  /** The whole request again (its key's claimant stopped before recording a run). */
  again(): Promise<StartedRun>;
}

/**
 * Claim the idempotency key, record the run, check the concurrent-runs limit, start the Temporal workflow (workflow
 * id = run id; behind the answer while Temporal answers), confirm. The record is created `queued` first (so a crash
 * after the start still leaves a findable run) and removed again when the limit or an unreachable Temporal refuses.
 */
export async function launchRun(deps: StartRunDeps, req: LaunchRequest, steps: LaunchSteps): Promise<StartedRun> {
  const key = req.idempotencyKey;
  if (key !== undefined) {
    const existing = await findClaim(deps.db, req.ownerId, key);
    if (existing) return replay(deps, req, existing, steps);
  }
  const now = new Date();
  // Read again from the start: the reads overlap the preparing and the insert. A failed read counts as a change (the
  // start then begins again, and reads, and fails, as any other would).
  const current = steps.recheck?.().catch(() => false);
  const prepared = await prepareWithinLimits(steps, now);
  const { snapshot } = prepared;
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
  // While Temporal answers, the run is acknowledged once recorded and admitted, and started behind the answer
  // (./execution-starts.ts); `start_pending_at` marks it for the sweep until Temporal has it.
  const early = deps.starts.acknowledgeEarly;
  const doc = withTraceId(prepared.adjust ? prepared.adjust(fresh) : fresh);
  if (early) doc.start_pending_at = now;
  try {
    const [, unchanged] = await Promise.all([insertRun(deps.db, doc), current ?? true]);
    if (!unchanged) {
      await removeUnstarted(deps, doc);
      throw new StaleSourcesError();
    }
    await refuseBeyondConcurrentLimit(deps, doc);
    await steps.beforeStart?.(doc);
    if (!early) await deps.starts.startNow(doc, snapshot, { removeOnFailure: true });
  } catch (err) {
    if (key !== undefined) await releaseKey(deps.db, req.ownerId, key, doc._id).catch(() => undefined);
    throw err;
  }
  if (early) deps.starts.startBehind(doc, snapshot);
  await steps.afterStart?.(doc);
  deps.apiMetrics?.runStarted(runKindOf(snapshot.steps));
  return accepted(req, doc);
}

/** prepare() and the snapshot's size limit. With a recheck, what they refuse may be refused by stale sources. */
async function prepareWithinLimits(steps: LaunchSteps, now: Date): Promise<PreparedRun> {
  try {
    const prepared = await steps.prepare(newId('run'), now);
    const bytes = Buffer.byteLength(JSON.stringify(prepared.snapshot), 'utf8');
    if (bytes > MAX_SNAPSHOT_BYTES) {
      throw new UnprocessableError(
        `the run snapshot is ${bytes} bytes; the limit is ${MAX_SNAPSHOT_BYTES}`,
        'too_large',
      );
    }
    return prepared;
  } catch (err) {
    if (steps.recheck && err instanceof ApiError) throw new StaleSourcesError();
    throw err;
  }
}

/** A launch from sources that are (or may be) no longer those stored; nothing of it is left recorded. */
class StaleSourcesError extends Error {
  constructor() {
    super('the run was prepared from sources that have changed since');
  }
}

/**
 * USER_MAX_CONCURRENT_RUNS (runtime/runs/concurrent-limit.ts): a refused run's record is removed before Temporal ever
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
  await runsCollection(deps.db).deleteOne({ _id: doc._id, 'temporal.run_id': null });
}

function accepted(req: Pick<LaunchRequest, 'baseUrl'>, doc: Pick<RunDoc, '_id' | 'workflow_id'>): StartedRun {
  return {
    run_id: doc._id,
    workflow_id: doc.workflow_id,
    status: 'queued',
    status_url: `${req.baseUrl.replace(/\/+$/, '')}/api/v1/workflows/runs/${doc._id}/status`,
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
  await deps.starts.startNow(doc, loadedSnapshot(doc), { removeOnFailure: false });
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
  return createHash('sha256').update(canonical(request)).digest('hex');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
