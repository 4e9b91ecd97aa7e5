/**
 * POST /api/v1/workflows/:id/run's command, and the API side of the one way runs are created
 * (shared/runs/create-run.ts), which rerun, MCP and inbound hooks go through too: read the workflow and what its
 * snapshot is built from, check the input and the callback URL, then create the run (quota, idempotency, record,
 * concurrent-runs limit, Temporal start) and answer 202 once Temporal has it. The refusals of that function become the
 * API's answers here (429, 422, 409; an unreachable Temporal is a 503 that leaves no run behind).
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import type { RunDoc } from '../../db/runs';
import { findWorkflowWithTemplates } from '../../db/workflow-with-templates';
import { canonicalJson, type JsonObject } from '../../domain/json';
import type { RunSnapshot, RunStatus } from '../../domain/run';
import {
  ConcurrentRunsExceededError,
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  UnprocessableError,
} from '../http/errors';
import { statusUrlOf } from '../http/caller';
import { isTemporalUnavailable } from '../http/infra-errors';
import { checkCallbackUrl } from './callback-url';
import type { InputValidators } from './input-validators';
import { buildSnapshot } from '../../shared/runs/snapshot';
import { loadSnapshotSources } from '../../shared/runs/snapshot-sources';
import { createRun, RunRefusedError, type PreparedRun } from '../../shared/runs/create-run';
import type { ApiMetrics } from '../metrics';
import { runKindOf } from '../../shared/metrics/run-kind';
import type { WorkflowDoc } from '../../db/workflows';
import type { SnapshotSources } from '../../shared/runs/snapshot';
import { startExecution } from '../../shared/runs/start-execution';

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
  return launchRun(deps, launchRequestOf(req), {
    prepare: async (runId, now) => {
      // Checked here rather than before: an idempotent replay answers as the first request was answered.
      if ('problem' in stored) throw new UnprocessableError(stored.problem, 'workflow_invalid');
      return prepareRun(deps, req, stored, runId, now);
    },
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
  const found = await findWorkflowWithTemplates(deps.db, ownerId, workflowId);
  if (!found) return null;
  const { workflow, templates } = found;
  const loaded = await loadSnapshotSources(deps.db, ownerId, workflow, deps.config.SUBWORKFLOW_MAX_DEPTH, templates);
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
  /** Takes one run start from the caller's budget (429 when spent). */
  chargeRunStart?: (() => Promise<void>) | undefined;
}

export type { PreparedRun };

export interface LaunchSteps {
  /** Builds the run's snapshot (the run id is new); may refuse with an ApiError. */
  prepare(runId: string, now: Date): Promise<PreparedRun>;
  /** Idempotent work once the run is recorded and within the limits, before Temporal starts it (and on a repeat). */
  beforeStart?(doc: RunDoc): Promise<void>;
  /** Idempotent work once the run is acknowledged (recorded and admitted; and on a repeat). */
  afterStart?(doc: RunDoc): Promise<void>;
}

/**
 * A start through the API: the one run-creating function (shared/runs/create-run.ts) with Temporal's start, and its
 * refusals as the API answers them.
 */
export async function launchRun(deps: StartRunDeps, req: LaunchRequest, steps: LaunchSteps): Promise<StartedRun> {
  try {
    const { doc, created } = await createRun(deps, {
      ownerId: req.ownerId,
      idempotency:
        req.idempotencyKey !== undefined ? { key: req.idempotencyKey, requestHash: req.requestHash } : undefined,
      charge: req.chargeRunStart,
      prepare: (runId, now) => steps.prepare(runId, now),
      onRefused: 'remove',
      beforeStart: steps.beforeStart?.bind(steps),
      start: (doc, snapshot) => startOrUnavailable(deps, doc, snapshot),
      afterStart: steps.afterStart?.bind(steps),
    });
    if (created) deps.apiMetrics?.runStarted(runKindOf(doc.snapshot.steps));
    else deps.apiMetrics?.idempotentReplay();
    return accepted(req, doc);
  } catch (err) {
    throw err instanceof RunRefusedError ? refusalError(deps, err) : err;
  }
}

/** Starts the execution; an unreachable Temporal is the start's 503. */
async function startOrUnavailable(deps: StartRunDeps, doc: RunDoc, snapshot: RunSnapshot): Promise<void> {
  try {
    await startExecution(deps, doc, snapshot);
  } catch (err) {
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    throw err;
  }
}

function refusalError(deps: StartRunDeps, err: RunRefusedError): Error {
  switch (err.reason) {
    case 'concurrent_runs_exceeded':
      return new ConcurrentRunsExceededError(deps.config.USER_MAX_CONCURRENT_RUNS, CONCURRENT_RETRY_AFTER_SECONDS);
    case 'too_large':
    case 'idempotency_mismatch':
      return new UnprocessableError(err.message, err.reason);
    case 'in_flight':
      return new ConflictError(err.message);
  }
}

function accepted(req: Pick<LaunchRequest, 'baseUrl'>, doc: Pick<RunDoc, '_id' | 'workflow_id'>): StartedRun {
  return {
    run_id: doc._id,
    workflow_id: doc.workflow_id,
    status: 'queued',
    status_url: statusUrlOf(req.baseUrl, doc._id),
  };
}

/** Canonical JSON (sorted keys) so that the same body in another key order counts as the same request. */
export function hashRequest(request: JsonObject): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
