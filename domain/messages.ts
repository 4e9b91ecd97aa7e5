/**
 * Messages of the run workflow: the approval update sent by `POST /workflows/runs/:runId/approve` and a progress
 * query for operators, and the budget signals between a sub-workflow's run and the top-level run whose budget it spends
 * (temporal/workflows/budget-share.ts). Cancellation uses Temporal's own workflow cancellation. Workflow-safe: definitions only.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
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

/** A sub-workflow's run asks the top-level run to reserve one model call; `key` names the call (idempotent by it). */
export interface BudgetReserveRequest {
  key: string;
  /** The run (workflow id) that waits for the answer. */
  reply_to: string;
}

/** The top-level run's answer: granted, or why not (the budget_exceeded message). */
export interface BudgetGrant {
  key: string;
  refused: string | null;
}

/** What a reserved call used: its tokens, or `released` when it failed without an answer (the call is given back). */
export interface BudgetSettlement {
  key: string;
  tokens: number;
  released: boolean;
}

export const budgetReserveSignal = defineSignal<[BudgetReserveRequest]>('budget_reserve');
export const budgetGrantSignal = defineSignal<[BudgetGrant]>('budget_grant');
export const budgetSettleSignal = defineSignal<[BudgetSettlement]>('budget_settle');
