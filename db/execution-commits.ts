/**
 * Group commit of a run's map and loop executions that end quickly (what db/step-states.ts recordStepDone writes for an
 * item whose start and end go together). Alone, each such write is three round trips in sequence: the run's write
 * (not ended? then allocate the event seqs), the execution's upsert, the events' insert. A map runs up to its
 * concurrency of items at once, so their writes queued one behind the other's round trips.
 *
 * Here the writes of one run that arrive while a commit of that run is under way wait for it and then go together:
 * the same three round trips for the lot. A lone write goes at once, as before. Every caller still waits for its own
 * write to be stored: nothing is acknowledged before it is durable. The batch is per process: writers in other
 * worker processes commit their own, each with its own seqs (db/run-events.ts), so nothing collides.
 */
import type { Db } from 'mongodb';
import { removeApproval } from './approvals';
import { appendRunEvents, fillEventSeqs, grantFrom } from './run-events';
import { notTerminal, runsCollection } from './runs';
import { endsExecution, stepChangeEvents, type StepChange } from './step-events';
import { writeExecutions, type StepExecutionDoc } from './step-executions';

export interface ExecutionWrite {
  exec: { stepId: string; execId: string; position: number };
  set: Partial<Omit<StepExecutionDoc, '_id' | 'run_id' | 'step_id' | 'exec_id' | 'position'>>;
  /** When the attempt started: the run's `started_at` is at most this. */
  startedAt: Date;
  /** What the write logs when the execution takes it. */
  changes: StepChange[];
}

/** The most writes one commit carries (a bound on its documents' size, not a tuning knob). */
const MAX_BATCH = 100;

interface Waiting {
  write: ExecutionWrite;
  resolve: (live: boolean) => void;
  reject: (err: unknown) => void;
}

/** The writes waiting for each run's commit under way, per database handle (a process may hold several in tests). */
const queues = new WeakMap<Db, Map<string, Waiting[]>>();

/**
 * Stores the write with the run's other writes under way; false when the run has already ended (nothing written).
 * A database failure rejects every write of that commit: their callers fall back as for a failed write of their own.
 */
export function commitExecutionWrite(db: Db, runId: string, write: ExecutionWrite): Promise<boolean> {
  let byRun = queues.get(db);
  if (!byRun) queues.set(db, (byRun = new Map<string, Waiting[]>()));
  const waiting = byRun.get(runId);
  return new Promise<boolean>((resolve, reject) => {
    const entry = { write, resolve, reject };
    if (waiting) waiting.push(entry);
    else void drain(db, runId, byRun, [entry]);
  });
}

/** Commits what is queued for the run, then what queued meanwhile, until nothing is left. */
async function drain(db: Db, runId: string, byRun: Map<string, Waiting[]>, first: Waiting[]): Promise<void> {
  const queue = first;
  byRun.set(runId, queue);
  while (queue.length > 0) {
    const batch = queue.splice(0, MAX_BATCH);
    try {
      const live = await commit(
        db,
        runId,
        batch.map((w) => w.write),
      );
      for (const w of batch) w.resolve(live);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
  byRun.delete(runId);
}

/** One commit: the run's write allocating every seq, the executions' upserts, then the events (or skips). */
async function commit(db: Db, runId: string, writes: ExecutionWrite[]): Promise<boolean> {
  const events = writes.reduce((n, w) => n + w.changes.length, 0);
  const earliest = new Date(Math.min(...writes.map((w) => w.startedAt.getTime())));
  const allocatedAt = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal },
    {
      $set: { status: 'running', updated_at: new Date() },
      $min: { started_at: earliest },
      $inc: { event_seq: events },
    },
    { returnDocument: 'before', projection: { event_seq: 1, 'steps.id': 1, 'steps.action_type': 1 } },
  );
  if (!before) return false;
  const took = await writeExecutions(
    db,
    writes.map((w) => ({ key: { runId, ...w.exec }, set: w.set })),
  );
  // The writes that took effect log their changes at the first seqs; the seqs of the rest (a late write to an
  // execution that had already ended) get skips.
  const logged = writes.filter((_, i) => took[i]);
  const seqs = grantFrom(before, allocatedAt);
  const toLog = stepChangeEvents(logged.map((w) => ({ execId: w.exec.execId, changes: w.changes })));
  await Promise.all([
    appendRunEvents(db, runId, toLog, seqs),
    fillEventSeqs(db, runId, seqs.first + toLog.length, events - toLog.length),
  ]);
  // An approval item that ended leaves the approvals inbox (db/step-writes.ts afterChange does the same for one write).
  const approvals = new Set(before.steps.filter((s) => s.action_type === 'approval').map((s) => s.id));
  const ended = logged.filter((w) => approvals.has(w.exec.stepId) && w.changes.some(endsExecution));
  await Promise.all(ended.map((w) => removeApproval(db, runId, w.exec.execId)));
  return true;
}
