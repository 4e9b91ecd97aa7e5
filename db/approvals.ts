/**
 * `approvals`: the inbox of approval steps waiting for their run owner's decision, one document per waiting execution
 * (`<run id>/<exec id>`). Written when an approval starts waiting (db/step-waits.ts markStepWaiting); removed when it is
 * decided (the API, as soon as the workflow accepted the decision), when the execution ends any other way (timeout,
 * a cancelled branch) and when the run ends. The runs projection stays the truth: this is a list to find them by.
 */
import type { Db } from 'mongodb';
import type { ApprovalRequest } from '../domain/steps';

export interface ApprovalDoc {
  _id: string;
  owner_id: string;
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  /** The execution id the decision names (`review`, `review[2]`, `review#3`). */
  step_id: string;
  message: string;
  instructions: string | null;
  /** When the wait began: the inbox lists the oldest first (db/paging.ts orders by created_at). */
  created_at: Date;
  deadline: Date | null;
  /**
   * An agent step's wait: the tool call it asks about (`<transcript seq>:<index>`, db/step-events.ts). The execution
   * waits for its calls one after the other under the same id: a removal for one call leaves the next one's listing.
   */
  call_key?: string | null;
}

export function approvalsCollection(db: Db) {
  return db.collection<ApprovalDoc>('approvals');
}

export function approvalId(runId: string, execId: string): string {
  return `${runId}/${execId}`;
}

/** Lists a waiting approval (a retried write replaces it with the same content). */
export async function putApproval(
  db: Db,
  run: { _id: string; owner_id: string; workflow_id: string; workflow_name: string },
  execId: string,
  request: ApprovalRequest,
  callKey?: string,
): Promise<void> {
  const doc: ApprovalDoc = {
    _id: approvalId(run._id, execId),
    owner_id: run.owner_id,
    run_id: run._id,
    workflow_id: run.workflow_id,
    workflow_name: run.workflow_name,
    step_id: execId,
    message: request.message,
    instructions: request.instructions,
    created_at: new Date(request.waiting_since),
    deadline: request.deadline ? new Date(request.deadline) : null,
    ...(callKey !== undefined ? { call_key: callKey } : {}),
  };
  await approvalsCollection(db).replaceOne({ _id: doc._id }, doc, { upsert: true });
}

/** With `callKey`: only that call's listing (or one that names no call). */
export async function removeApproval(db: Db, runId: string, execId: string, callKey?: string): Promise<void> {
  const _id = approvalId(runId, execId);
  await approvalsCollection(db).deleteOne(
    callKey === undefined ? { _id } : { _id, call_key: { $in: [callKey, null] } },
  );
}

/** The call a listed agent approval asks about (undefined: none listed, or an approval step's). */
export async function listedCallKey(db: Db, runId: string, execId: string): Promise<string | undefined> {
  const doc = await approvalsCollection(db).findOne(
    { _id: approvalId(runId, execId) },
    { projection: { call_key: 1 } },
  );
  return doc?.call_key ?? undefined;
}

/** A run that ended waits for nothing. */
export async function removeRunApprovals(db: Db, runId: string): Promise<void> {
  await approvalsCollection(db).deleteMany({ run_id: runId });
}
