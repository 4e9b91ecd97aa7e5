/**
 * B11's stored data: synthetic runs cloned from a real completed run document (so every list and presenter reads the
 * shape the service writes), and agent transcript entries spread over them, bulk-inserted in unordered batches.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db, Document, OptionalUnlessRequiredId } from 'mongodb';
import { newId } from '../db/ids';
import { ensureIndexes } from '../db/indexes';
import type { RunDoc } from '../db/runs';
import { transcriptEntryId, type TranscriptDoc } from '../db/transcripts';
import type { RunStatus } from '../domain/run';

const DAY_MS = 86_400_000;

export interface SyntheticOwner {
  ownerId: string;
  workflowId: string;
  workflowName: string;
}

/**
 * Statuses of the synthetic runs, by position: mostly completed. The bench user's runs are all terminal — runs in
 * flight count against USER_MAX_CONCURRENT_RUNS, and one beyond it would refuse the benchmark's own starts — other
 * users' runs include in-flight ones, which the owner filter must skip over.
 */
function statusAt(i: number, inFlight: boolean): RunStatus {
  const k = i % 100;
  if (k < 6) return 'failed';
  if (k < 8) return 'cancelled';
  if (k < 9) return 'timed_out';
  if (inFlight && k < 12) return k < 10 ? 'running' : k < 11 ? 'queued' : 'waiting';
  return 'completed';
}

/**
 * A copy of `template` (a stored run document, snapshot included) under a new id, owner and workflow, with `status`
 * and times spread over the `spreadDays` before `before`.
 */
export function syntheticRun(
  template: RunDoc,
  owner: SyntheticOwner,
  i: number,
  opts: { before: Date; spreadDays: number; inFlight: boolean },
): RunDoc {
  const status = statusAt(i, opts.inFlight);
  const createdAt = new Date(opts.before.getTime() - 1000 - Math.floor(Math.random() * opts.spreadDays * DAY_MS));
  const ended = new Date(createdAt.getTime() + 50 + (i % 500));
  const terminal = ['completed', 'failed', 'cancelled', 'timed_out'].includes(status);
  const _id = newId('run');
  const lastStep = template.steps.length - 1;
  return {
    ...template,
    _id,
    owner_id: owner.ownerId,
    workflow_id: owner.workflowId,
    workflow_name: owner.workflowName,
    status,
    steps: template.steps.map((s, n) => {
      if (status === 'completed') return s;
      if (status === 'failed' && n === lastStep)
        return { ...s, status: 'failed', output_json: null, error: { reason: 'non_retryable', message: 'bench' } };
      if (status === 'running' && n === lastStep) return { ...s, status: 'running', output_json: null };
      if (status === 'waiting' && n === lastStep) return { ...s, status: 'waiting', output_json: null };
      if (status === 'queued') return { ...s, status: 'pending', output_json: null, started_at: null };
      return n === lastStep ? { ...s, status: 'skipped', output_json: null } : s;
    }),
    error:
      status === 'failed'
        ? { step_id: template.steps[lastStep]?.id ?? null, reason: 'non_retryable', message: 'bench' }
        : null,
    snapshot: { ...template.snapshot, run_id: _id, owner_id: owner.ownerId, workflow_id: owner.workflowId },
    temporal: { ...template.temporal, run_id: randomUUID() },
    created_at: createdAt,
    updated_at: terminal ? ended : createdAt,
    started_at: createdAt,
    completed_at: terminal ? ended : null,
  };
}

/** What an agent step's transcript holds, entry by entry (db/transcripts.ts), about 300–600 bytes each. */
export function transcriptEntry(runId: string, seq: number, at: Date): TranscriptDoc {
  const base = {
    _id: transcriptEntryId(runId, 's1', seq),
    run_id: runId,
    step_id: 's1',
    seq,
    attempt: 1,
    written_at: at,
  };
  const turn = Math.ceil(seq / 2);
  if (seq === 0) {
    return {
      ...base,
      kind: 'setup',
      system: 'You summarise support tickets in three sentences. '.repeat(4),
      model: 'mock-model',
      tools: ['http_get'],
      output_schema: null,
      max_turns: 10,
    };
  }
  if (seq === 1)
    return { ...base, kind: 'user', text: 'Ticket #4711: the export fails after login. '.repeat(6), repair: false };
  if (seq % 2 === 0) {
    return {
      ...base,
      kind: 'assistant',
      turn,
      text: 'Looking at the ticket history before answering. '.repeat(3),
      tool_calls: [{ id: `call_${seq}`, name: 'http_get', args: { url: 'https://example.test/tickets/4711' } }],
      usage: { input_tokens: 420 + seq, output_tokens: 60 },
      finish_reason: 'tool-calls',
      final: false,
    };
  }
  return {
    ...base,
    kind: 'tool',
    turn,
    call_id: `call_${seq - 1}`,
    name: 'http_get',
    args: { url: 'https://example.test/tickets/4711' },
    output: { status: 200, body: 'ticket text '.repeat(20) },
    is_error: false,
    truncated: false,
  };
}

export interface LoadResult {
  inserted: number;
  seconds: number;
  perSecond: number;
  /** True when the time budget ended the load before `count`. */
  cut: boolean;
}

/**
 * Inserts `count` documents made by `make(i)` in unordered batches of `batch`, `inFlight` batches at a time, stopping
 * early (at a batch boundary) once `budgetSeconds` have passed.
 */
export async function bulkInsert<T extends Document>(
  collection: Collection<T>,
  count: number,
  make: (i: number) => OptionalUnlessRequiredId<T>,
  opts: { batch?: number; inFlight?: number; budgetSeconds?: number; progress?: (n: number) => void } = {},
): Promise<LoadResult> {
  const batch = opts.batch ?? 1000;
  const t0 = Date.now();
  const deadline = opts.budgetSeconds === undefined ? Infinity : t0 + opts.budgetSeconds * 1000;
  let next = 0;
  let inserted = 0;
  let lastReport = 0;
  await Promise.all(
    Array.from({ length: opts.inFlight ?? 2 }, async () => {
      while (next < count && Date.now() < deadline) {
        const from = next;
        next = Math.min(count, next + batch);
        const docs = Array.from({ length: next - from }, (_, k) => make(from + k));
        await collection.insertMany(docs, { ordered: false });
        inserted += docs.length;
        if (opts.progress && inserted - lastReport >= 50_000) {
          lastReport = inserted;
          opts.progress(inserted);
        }
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  return { inserted, seconds, perSecond: inserted / seconds, cut: inserted < count };
}

/** Collections of B11's data. */
export const runsOf = (db: Db) => db.collection<RunDoc>('runs');
export const transcriptsOf = (db: Db) => db.collection<TranscriptDoc>('transcripts');

/**
 * Copies every document of every collection of `from` into `to` (indexes made first, as the API makes them): B11's
 * two copies of its small data set, on the same server, one of which then grows.
 */
export async function copyDatabase(from: Db, to: Db, batch = 1000): Promise<number> {
  await ensureIndexes(to);
  let copied = 0;
  for (const { name } of await from.listCollections({}, { nameOnly: true }).toArray()) {
    if (name.startsWith('system.')) continue;
    let docs: Document[] = [];
    for await (const doc of from.collection(name).find()) {
      docs.push(doc);
      if (docs.length === batch) {
        await to.collection(name).insertMany(docs, { ordered: false });
        copied += docs.length;
        docs = [];
      }
    }
    if (docs.length > 0) await to.collection(name).insertMany(docs, { ordered: false });
    copied += docs.length;
  }
  return copied;
}
