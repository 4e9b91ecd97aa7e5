/**
 * A step that waits for its owner's decision, written by the worker: an approval step, or an agent step whose tool
 * call needs approval (decisions 0410 and 0520). The wait lists the approval in the owner's inbox
 * (./approvals.ts); the agent step's resumption takes it out again.
 */
import type { Db } from 'mongodb';
import { putApproval, removeApproval } from './approvals';
import { grantFrom } from './run-events';
import { notTerminal, runsCollection } from './runs';
import { waitedCallKey, type StepChange, type WaitedToolCall } from './step-events';
import { innerExecution, logged, updateExecution, updateStep, type StepWrite } from './step-writes';
import type { ApprovalRequest } from '../domain/steps';

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
 * An agent step waits for the owner's decision on one of its tool calls (`call`), with the approval listed in the
 * inbox. Only the status moves: the step's start and attempts stay those of its model calls. Each call's wait logs
 * its own `step.waiting` (keyed by the call): a step may wait several times, and the step and its listing name the
 * call, so that the resumption after an earlier call cannot undo this wait (markAgentResumed).
 */
export async function markAgentWaiting(
  db: Db,
  runId: string,
  stepId: string,
  call: WaitedToolCall,
  approval: ApprovalRequest,
): Promise<boolean> {
  const key = waitedCallKey(call);
  const inner = innerExecution(stepId);
  const write: StepWrite = inner
    ? { wrote: await updateExecution(db, runId, inner, { status: 'waiting', waiting_call: key }) }
    : await updateStep(
        db,
        runId,
        stepId,
        { $set: { updated_at: new Date(), 'steps.$.status': 'waiting', 'steps.$.waiting_call': key } },
        1,
      );
  if (write.wrote) {
    const run = await runsCollection(db).findOne(
      { _id: runId },
      { projection: { owner_id: 1, workflow_id: 1, workflow_name: 1 } },
    );
    if (run) await putApproval(db, run, stepId, approval, key);
  }
  return logged(db, runId, stepId, { type: 'step.waiting', tool_call: call }, write);
}

/**
 * The decision on `call` came and the agent step goes on (running its loop again, whatever the answer): logged as
 * `step.resumed`, so a follower of the events knows the wait ended (decision 0520). Two calls of one turn wait one
 * after the other, and the next wait may be written before this: then the step waits for that call, and this write
 * changes and logs nothing (a step written before calls were recorded names none, and goes on).
 */
export async function markAgentResumed(
  db: Db,
  runId: string,
  stepId: string,
  call: WaitedToolCall,
  approved: boolean,
): Promise<boolean> {
  const key = waitedCallKey(call);
  const change: StepChange = { type: 'step.resumed', tool_call: call, approved };
  const waitsForIt = { $in: [key, null] };
  // A decision that came before the inbox write leaves it behind; going on, the step waits for nothing.
  await removeApproval(db, runId, stepId, key);
  const inner = innerExecution(stepId);
  if (inner) {
    const set = { status: 'running' as const, waiting_call: null };
    return updateExecution(db, runId, inner, set, { change, where: { waiting_call: waitsForIt } });
  }
  const allocatedAt = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal, steps: { $elemMatch: { id: stepId, waiting_call: waitsForIt } } },
    {
      $set: { updated_at: new Date(), 'steps.$[s].status': 'running', 'steps.$[s].waiting_call': null },
      $inc: { event_seq: 1 },
    },
    // Not the positional `$`: it finds no position when the match was on a missing waiting_call (`null`).
    { returnDocument: 'before', projection: { event_seq: 1 }, arrayFilters: [{ 's.id': stepId }] },
  );
  if (!before) return false;
  return logged(db, runId, stepId, change, { wrote: true, seqs: grantFrom(before, allocatedAt), mayWait: true });
}
