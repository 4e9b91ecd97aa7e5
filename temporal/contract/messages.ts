/**
 * Messages of the run workflow: the approval update sent by `POST /workflows/runs/:runId/approve` and a progress
 * query for operators. Cancellation uses Temporal's own workflow cancellation. Workflow-safe: definitions only.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { RunStatus, StepStatus } from './run';

/** A human decision on a waiting `approval` step. */
export interface ApprovalDecision {
  step_id: string;
  approved: boolean;
  comment: string | null;
  /** The deciding user's id. */
  by: string;
}

export interface ApprovalAccepted {
  step_id: string;
  approved: boolean;
}

/**
 * Resumes (approved) or fails (rejected) the run waiting on `step_id`. The validator refuses a decision for a step
 * that is not waiting, so the caller learns it synchronously instead of the workflow silently ignoring it.
 */
export const approveUpdate = defineUpdate<ApprovalAccepted, [ApprovalDecision]>('approve');

export interface RunProgress {
  status: RunStatus;
  current_step: string | null;
  steps: Record<string, StepStatus>;
}

/** The workflow's own view of where it is (needs a live worker; the API reads the MongoDB projection instead). */
export const progressQuery = defineQuery<RunProgress>('progress');

/** ApplicationFailure type of an approval rejection (the run fails with reason `rejected`). */
export const REJECTED_FAILURE_TYPE = 'approval_rejected';
