/**
 * `step_executions`: one document per execution of a map item or a loop iteration (`emails[3]`, `draft#2`), keyed
 * by run and execution id, so a retried or replayed write lands on the same document. Plain steps live in the run
 * document itself (db/runs.ts); a map of 1 000 items would make that document too large and its writes contend.
 *
 * Writes never move an execution out of a terminal state: a late attempt-start after a completion changes nothing.
 */
import type { Db, Filter } from 'mongodb';
import type { StepStatus, Usage } from '../domain/run';
import type { StepError } from '../domain/steps';
import { duplicateKeyIndexes, isDuplicateKey } from './duplicate-key';

export interface StepExecutionDoc {
  /** `<run id>/<step id>/<position, 6 digits>`: sorts in item order, so the executions endpoint pages by _id. */
  _id: string;
  run_id: string;
  step_id: string;
  exec_id: string;
  /** Map item index (0-based) or loop iteration (1-based): the order the status lists them in. */
  position: number;
  status: StepStatus;
  attempts: number;
  /** What the execution was given, rendered (JSON text; db/step-states.ts recordStepInput). */
  input_json?: string | null;
  output_json: string | null;
  error: StepError | null;
  usage: Usage;
  turns: number | null;
  child_run_id: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
  /** An agent execution waiting for a decision: the tool call it waits for (db/step-waits.ts markAgentWaiting). */
  waiting_call?: string | null;
}

export function executionDocId(runId: string, stepId: string, position: number): string {
  return `${runId}/${stepId}/${String(position).padStart(6, '0')}`;
}

export function stepExecutionsCollection(db: Db) {
  return db.collection<StepExecutionDoc>('step_executions');
}

const TERMINAL_STEP: StepStatus[] = ['completed', 'failed', 'skipped'];
const ZERO: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };

type ExecutionKey = { runId: string; stepId: string; execId: string; position: number };
type ExecutionSet = Partial<Omit<StepExecutionDoc, '_id' | 'run_id' | 'step_id' | 'exec_id' | 'position'>>;

/** The upsert that applies `set` to an execution unless it is terminal (unless `force`), creating it on first write. */
function executionUpsert(key: ExecutionKey, set: ExecutionSet, force: boolean, where: Filter<StepExecutionDoc> = {}) {
  const _id = executionDocId(key.runId, key.stepId, key.position);
  const filter: Filter<StepExecutionDoc> = force
    ? { ...where, _id }
    : { ...where, _id, status: { $nin: TERMINAL_STEP } };
  const defaults: Omit<StepExecutionDoc, '_id' | 'updated_at'> = {
    run_id: key.runId,
    step_id: key.stepId,
    exec_id: key.execId,
    position: key.position,
    status: 'pending',
    attempts: 0,
    output_json: null,
    error: null,
    usage: ZERO,
    turns: null,
    child_run_id: null,
    started_at: null,
    completed_at: null,
  };
  const setOnInsert = Object.fromEntries(Object.entries(defaults).filter(([k]) => !(k in set)));
  return { filter, update: { $set: { ...set, updated_at: new Date() }, $setOnInsert: setOnInsert }, upsert: true };
}

/**
 * Applies `set` to the execution unless it is already terminal (`force` writes even then: the ending itself),
 * creating the document on first write. Returns false when a terminal execution was left alone.
 */
export async function writeExecution(
  db: Db,
  key: ExecutionKey,
  set: ExecutionSet,
  opts: { force?: boolean; where?: Filter<StepExecutionDoc> } = {},
): Promise<boolean> {
  const { filter, update } = executionUpsert(key, set, opts.force ?? false, opts.where);
  try {
    const res = await stepExecutionsCollection(db).updateOne(filter, update, { upsert: true });
    return res.matchedCount + res.upsertedCount > 0;
  } catch (err) {
    // The filter missed because the execution is terminal (or not as `where` asks), so the upsert collided with it.
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/**
 * writeExecution for several executions in one round trip (never `force`): for each, whether it took the write. An
 * upsert either matches a non-terminal execution or collides with the terminal one, so a duplicate key at an index
 * is exactly "left alone".
 */
export async function writeExecutions(db: Db, writes: { key: ExecutionKey; set: ExecutionSet }[]): Promise<boolean[]> {
  if (writes.length === 0) return [];
  const ops = writes.map(({ key, set }) => ({ updateOne: executionUpsert(key, set, false) }));
  try {
    await stepExecutionsCollection(db).bulkWrite(ops, { ordered: false });
    return writes.map(() => true);
  } catch (err) {
    const refused = duplicateKeyIndexes(err);
    if (!refused) throw err;
    return writes.map((_, i) => !refused.has(i));
  }
}

/** Closes every open execution of a run when the run ends (cancelled, failed, timed out): nothing stays `running`. */
export async function closeOpenExecutions(db: Db, runId: string, error: StepError, at: Date): Promise<void> {
  await stepExecutionsCollection(db).updateMany(
    { run_id: runId, status: { $in: ['running', 'waiting'] } },
    { $set: { status: 'failed', error, completed_at: at, updated_at: at } },
  );
}

export interface ExecutionCounts {
  total: number;
  by_status: Partial<Record<StepStatus, number>>;
}

/** The first `limit` executions of each of the run's map and loop steps, in order, and each step's counts. */
export async function readExecutions(
  db: Db,
  runId: string,
  stepIds: readonly string[],
  limit: number,
): Promise<Map<string, { shown: StepExecutionDoc[]; counts: ExecutionCounts }>> {
  const out = new Map<string, { shown: StepExecutionDoc[]; counts: ExecutionCounts }>();
  await Promise.all(
    stepIds.map(async (stepId) => {
      const coll = stepExecutionsCollection(db);
      const [shown, grouped] = await Promise.all([
        coll.find({ run_id: runId, step_id: stepId }).sort({ _id: 1 }).limit(limit).toArray(),
        coll
          .aggregate<{ _id: StepStatus; n: number }>([
            { $match: { run_id: runId, step_id: stepId } },
            { $group: { _id: '$status', n: { $sum: 1 } } },
          ])
          .toArray(),
      ]);
      const by_status: Partial<Record<StepStatus, number>> = {};
      let total = 0;
      for (const g of grouped) {
        by_status[g._id] = g.n;
        total += g.n;
      }
      out.set(stepId, { shown, counts: { total, by_status } });
    }),
  );
  return out;
}

/** One execution (approvals of steps inside maps and loops). */
export async function findExecution(
  db: Db,
  runId: string,
  stepId: string,
  position: number,
): Promise<StepExecutionDoc | null> {
  return stepExecutionsCollection(db).findOne({ _id: executionDocId(runId, stepId, position) });
}
