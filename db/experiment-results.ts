/**
 * An experiment's item results: one document per item × repetition, `_id` `<experiment>:<index>:<repetition>`, so a
 * retried scoring activity overwrites its own result and never adds one. Listed in the pinned items' order.
 */
import type { Db } from 'mongodb';
import type { ScoreResult, SampleUsage } from '../domain/evals';
import type { ReplayDiff } from '../domain/replay';
import { findPage, type Page, type PageRequest } from './paging';

export interface ExperimentResultDoc {
  _id: string;
  experiment_id: string;
  owner_id: string;
  item_id: string;
  /** The item's place in the pinned list (the list's order). */
  index: number;
  repetition: number;
  run_id: string;
  /** The run's end status, or `not_started` when it could not start (the error says why). */
  run_status: string;
  scores: ScoreResult[];
  /** The run's usage plus the LLM judge's model calls (what the experiment's budget counts). */
  usage: SampleUsage;
  /** The LLM judge's share of `usage` (absent in results written before the judge existed). */
  judge_usage?: SampleUsage;
  latency_ms: number;
  /** The run's output (`{stepId: output}`) as JSON text; null when it has none. */
  output_json: string | null;
  error: string | null;
  /**
   * Replay mode: each step replayed from the recorded run or executed, and what changed, as JSON text (a ReplayDiff;
   * text because it holds outputs, whose keys MongoDB may refuse). Null or absent in live mode.
   */
  replay_json?: string | null;
  created_at: Date;
}

export function experimentResultsCollection(db: Db) {
  return db.collection<ExperimentResultDoc>('experiment_results');
}

/** `_id` of a unit's result: sorts in the list's order (index and repetition zero-padded). */
export function resultId(experimentId: string, index: number, repetition: number): string {
  return `${experimentId}:${String(index).padStart(6, '0')}:${String(repetition).padStart(4, '0')}`;
}

/** Writes a unit's result (a retry replaces it). */
export async function putExperimentResult(db: Db, doc: ExperimentResultDoc): Promise<void> {
  await experimentResultsCollection(db).replaceOne({ _id: doc._id }, doc, { upsert: true });
}

/** One page of an experiment's results, in the items' order. */
export async function findResultsPage(
  db: Db,
  experimentId: string,
  page: PageRequest,
): Promise<Page<ExperimentResultDoc>> {
  return findPage(experimentResultsCollection(db), { experiment_id: experimentId }, page);
}

/** Every result of an experiment (bounded by the dataset's item limit × repetitions), in the items' order. */
export async function allResults(db: Db, experimentId: string): Promise<ExperimentResultDoc[]> {
  return experimentResultsCollection(db).find({ experiment_id: experimentId }).sort({ _id: 1 }).toArray();
}

/** A result's replay difference (null in live mode). */
export function replayOf(doc: Pick<ExperimentResultDoc, 'replay_json'>): ReplayDiff | null {
  return doc.replay_json ? (JSON.parse(doc.replay_json) as ReplayDiff) : null;
}
