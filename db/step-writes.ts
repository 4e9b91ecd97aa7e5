/**
 * The two writes every step change is made of, for ./step-states.ts and ./step-waits.ts: a plain step's state in its
 * run's document (`steps[]`, updateStep) or a map item's or loop iteration's in `step_executions` (updateExecution),
 * conditional on the run not being terminal and allocating the change's event seqs in the same write; then, when it
 * took effect, the change in the run's event log and the approvals inbox cleared of an execution that ended.
 */
import type { Db, Filter, UpdateFilter } from 'mongodb';
import { removeApproval } from './approvals';
import { fillEventSeqs, grantFrom, type NewRunEvent, type SeqGrant } from './run-events';
import { notTerminal, runsCollection, type RunDoc } from './runs';
import { endsExecution, logStepChange, type StepChange } from './step-events';
import { writeExecution, type StepExecutionDoc } from './step-executions';
import { parseExecutionId } from '../domain/exec-id';

/**
 * What a step write found: whether it took effect (the run had not ended); the event seqs it allocated for the
 * change (db/run-events.ts: logging it then costs only the insert); and, from the document as it was before,
 * whether the step could be in the approvals inbox (it was waiting, or it is an approval step).
 */
export interface StepWrite {
  wrote: boolean;
  seqs?: SeqGrant;
  mayWait?: boolean;
}

/** `events`: how many event seqs to allocate with the write (the changes it will log when it takes effect). */
export async function updateStep(
  db: Db,
  runId: string,
  stepId: string,
  update: UpdateFilter<RunDoc>,
  events = 0,
): Promise<StepWrite> {
  const filter: Filter<RunDoc> = { _id: runId, status: notTerminal, 'steps.id': stepId };
  const allocatedAt = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    filter,
    events > 0 ? { ...update, $inc: { event_seq: events } } : update,
    { returnDocument: 'before', projection: { event_seq: 1, 'steps.id': 1, 'steps.status': 1 } },
  );
  if (!before) return { wrote: false };
  return {
    wrote: true,
    ...(events > 0 ? { seqs: grantFrom(before, allocatedAt) } : {}),
    mayWait: before.steps.some((s) => s.id === stepId && s.status === 'waiting'),
  };
}

/** A map item or loop iteration (`emails[3]`, `draft#2`), or undefined for a plain step id. */
export function innerExecution(execId: string) {
  const parsed = parseExecutionId(execId);
  if (!parsed || parsed.kind === 'step') return undefined;
  return {
    stepId: parsed.stepId,
    execId,
    position: parsed.kind === 'item' ? parsed.index : parsed.iteration,
  };
}

/**
 * A write to an execution inside a map or loop: it goes to `step_executions` (db/step-executions.ts) if the run has
 * not ended; the run's `updated_at` moves so long polls see the progress. The change is logged only when the
 * execution took it (a late write to an ended execution changes nothing). Returns false when the run is terminal.
 */
export async function updateExecution(
  db: Db,
  runId: string,
  exec: NonNullable<ReturnType<typeof innerExecution>>,
  set: Parameters<typeof writeExecution>[2],
  opts: {
    startedAt?: Date;
    change?: StepChange | StepChange[];
    force?: boolean;
    where?: Filter<StepExecutionDoc>;
  } = {},
): Promise<boolean> {
  const now = new Date();
  const update: UpdateFilter<RunDoc> = opts.startedAt
    ? { $set: { status: 'running', updated_at: now }, $min: { started_at: opts.startedAt } }
    : { $set: { updated_at: now } };
  const events = opts.change === undefined ? 0 : Array.isArray(opts.change) ? opts.change.length : 1;
  const allocatedAt = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal },
    events > 0 ? { ...update, $inc: { event_seq: events } } : update,
    { returnDocument: 'before', projection: { event_seq: 1, 'steps.id': 1, 'steps.action_type': 1 } },
  );
  if (!before) return false;
  const changed = await writeExecution(db, { runId, ...exec }, set, {
    force: opts.force ?? false,
    ...(opts.where ? { where: opts.where } : {}),
  });
  if (opts.change) {
    const seqs = grantFrom(before, allocatedAt);
    // The seqs allocated with the run's write hold the changes, or nothing when the execution did not take them.
    if (!changed) await fillEventSeqs(db, runId, seqs.first, events);
    else {
      const mayWait = before.steps.some((s) => s.id === exec.stepId && s.action_type === 'approval');
      await afterChange(db, runId, exec.execId, opts.change, { wrote: true, seqs, mayWait });
    }
  }
  return true;
}

/**
 * What follows a write that took effect (a write refused because the run ended does neither): the change goes to the
 * event log, and an execution that has ended leaves the approvals inbox (whatever ended it: a decision, a timeout).
 */
export async function logged(
  db: Db,
  runId: string,
  execId: string,
  change: StepChange | StepChange[],
  write: StepWrite,
  before: NewRunEvent[] = [],
): Promise<boolean> {
  if (write.wrote) await afterChange(db, runId, execId, change, write, before);
  return write.wrote;
}

/** `found` is what the write saw; when it cannot tell whether the step could wait, the inbox is cleared just in case. */
async function afterChange(
  db: Db,
  runId: string,
  execId: string,
  change: StepChange | StepChange[],
  found: StepWrite,
  before: NewRunEvent[] = [],
): Promise<void> {
  const ends = (Array.isArray(change) ? change : [change]).some(endsExecution);
  if (ends && found.mayWait !== false) await removeApproval(db, runId, execId);
  await logStepChange(db, runId, execId, change, found.seqs, before);
}
