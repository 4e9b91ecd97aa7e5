/**
 * Cancel and approve: owner-checked against the projection first (404 for others' runs, 409 when the run or step is
 * not in a state that allows it), then sent to Temporal — cancellation as Temporal's own workflow cancellation (the
 * API writes no run state: the workflow records its `cancelled` outcome), the
 * decision as the run workflow's `approve` update, whose validator answers synchronously.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import { listedCallKey, removeApproval } from '../../db/approvals';
import { findRun, isTerminal } from '../../db/runs';
import { findExecution } from '../../db/step-executions';
import { parseExecutionId } from '../../domain/exec-id';
import { approveUpdate, type ApprovalAccepted } from '../../domain/messages';
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from '../http/errors';
import { isTemporalUnavailable } from '../http/infra-errors';

export interface RunControlDeps {
  db: Db;
  temporal: Client;
}

/** An update needs a live worker; without one the API answers 503 after this long instead of hanging. */
const UPDATE_DEADLINE_MS = 10_000;
const CANCEL_DEADLINE_MS = 5_000;

export async function cancelRun(deps: RunControlDeps, ownerId: string, runId: string): Promise<{ run_id: string }> {
  const run = await findRun(deps.db, ownerId, runId);
  if (!run) throw new NotFoundError(`run ${runId} not found`);
  if (isTerminal(run.status)) throw new ConflictError(`run ${runId} has already ended (${run.status})`);
  try {
    await deps.temporal.connection.withDeadline(Date.now() + CANCEL_DEADLINE_MS, () =>
      deps.temporal.workflow.getHandle(runId).cancel(),
    );
  } catch (err) {
    // A run is started before its start is answered, so only a start under way (or one whose API process stopped
    // before it was made: the worker's reconciler ends that run) has no execution yet. Either way nothing is written
    // here: the workflow records `cancelled` itself.
    if (err instanceof WorkflowNotFoundError) throw new ConflictError(`run ${runId} has not started`);
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    throw err;
  }
  return { run_id: runId };
}

export interface ApproveRequest {
  ownerId: string;
  runId: string;
  stepId: string;
  approved: boolean;
  comment: string | null;
}

export async function approveStep(deps: RunControlDeps, req: ApproveRequest): Promise<ApprovalAccepted> {
  const run = await findRun(deps.db, req.ownerId, req.runId);
  if (!run) throw new NotFoundError(`run ${req.runId} not found`);
  // `step_id` is an execution id: a step id, or `review[2]` / `review#3` for an approval inside a map or loop.
  const exec = parseExecutionId(req.stepId);
  const step = exec ? run.steps.find((s) => s.id === exec.stepId) : undefined;
  if (!exec || !step) throw new BadRequestError(`step_id: the run has no step "${req.stepId}"`, 'invalid_field');
  // An agent step waits too: for a decision on a destructive MCP tool call (docs/mcp.md).
  if (step.action_type !== 'approval' && step.kind !== 'agent') {
    throw new BadRequestError(
      `step_id: step "${exec.stepId}" is neither an approval step nor an agent step`,
      'invalid_field',
    );
  }
  if ((exec.kind === 'step') !== !step.repeat) {
    const how = step.repeat === 'map' ? `${step.id}[<index>]` : `${step.id}#<iteration>`;
    throw new BadRequestError(
      step.repeat
        ? `step_id: step "${step.id}" is a ${step.repeat}; name one execution (${how})`
        : `step_id: step "${step.id}" runs once; use "${step.id}"`,
      'invalid_field',
    );
  }
  if (isTerminal(run.status)) throw new ConflictError(`run ${req.runId} has already ended (${run.status})`);
  const status =
    exec.kind === 'step'
      ? step.status
      : ((await findExecution(deps.db, req.runId, exec.stepId, exec.kind === 'item' ? exec.index : exec.iteration))
          ?.status ?? 'pending');
  if (status !== 'waiting') {
    throw new ConflictError(`step "${req.stepId}" is not waiting for approval (it is ${status})`);
  }
  // An agent step's next call may wait (and be listed) as soon as this decision is taken: only this one is removed.
  const listed = step.kind === 'agent' ? await listedCallKey(deps.db, req.runId, req.stepId) : undefined;
  try {
    const accepted = await deps.temporal.connection.withDeadline(Date.now() + UPDATE_DEADLINE_MS, () =>
      deps.temporal.workflow.getHandle(req.runId).executeUpdate(approveUpdate, {
        args: [{ step_id: req.stepId, approved: req.approved, comment: req.comment, by: req.ownerId }],
      }),
    );
    // Decided: out of the inbox now, not when the step's completion reaches the projection a moment later.
    await removeApproval(deps.db, req.runId, req.stepId, listed);
    return accepted;
  } catch (err) {
    // The workflow's validator refused: the step stopped waiting in the meantime (e.g. a concurrent decision).
    if (err instanceof WorkflowUpdateFailedError) {
      throw new ConflictError(`step "${req.stepId}" is not waiting for approval`);
    }
    if (err instanceof WorkflowNotFoundError) throw new ConflictError(`run ${req.runId} has already ended`);
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal or a worker');
    throw err;
  }
}
