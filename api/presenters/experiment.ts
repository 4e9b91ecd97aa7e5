/** Experiments and their item results → JSON (the per-scorer summary comes from the domain's summarizeExperiment). */
import { z } from 'zod';
import { replayOf, type ExperimentResultDoc } from '../../db/experiment-results';
import type { ExperimentDoc } from '../../db/experiments';
import type { ExperimentResults, ExperimentSummary } from '../../domain/evals';
import { EXPERIMENT_MODES, EXPERIMENT_STATUSES, REPLAY_TOOL_CALLS } from '../../domain/experiment';
import type { JsonValue } from '../../domain/json';
import { iso, isoOrNull, isoTimestamp, jsonObjectView } from './common';

const scoreView = z.strictObject({ name: z.string(), score: z.number(), pass: z.boolean(), reason: z.string() });
const usageView = z.strictObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  llm_calls: z.number(),
  cost: z.number().optional(),
});
const scorerSummaryView = z.strictObject({
  name: z.string(),
  mean: z.number(),
  sd: z.number(),
  pass_rate: z.number(),
  n: z.number().int(),
});

/** A replayed item's steps against its recorded run (the result's and the comparison's `replay`). */
export const replayDiffView = z
  .strictObject({
    source_run_id: z.string().meta({ description: 'The recorded run the item was replayed from.' }),
    steps: z.array(
      z.strictObject({
        step_id: z.string(),
        how: z.enum(['replayed', 'executed', 'skipped']).meta({
          description: '`replayed`: answered from the recorded run (nothing ran); `executed`: ran again.',
        }),
        changed: z
          .boolean()
          .nullable()
          .meta({ description: 'Executed steps: whether the output differs from the recorded one.' }),
        recorded: z.unknown().optional().meta({
          description: 'Executed steps whose output changed: the recorded output (a preview above 2000 characters).',
        }),
        output: z.unknown().optional().meta({ description: 'Executed steps whose output changed: the new output.' }),
      }),
    ),
  })
  .meta({ id: 'ReplayDiff' });

export const experimentView = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    dataset_id: z.string(),
    dataset_version: z.number().int(),
    workflow_id: z.string(),
    overrides: z.record(z.string(), z.strictObject({ model: z.string() })).nullable(),
    mode: z.enum(EXPERIMENT_MODES),
    replay: z
      .strictObject({ tool_calls: z.enum(REPLAY_TOOL_CALLS) })
      .nullable()
      .meta({ description: 'Mode `replay`: its options; null in mode `live`.' }),
    scorers: z.array(jsonObjectView),
    concurrency: z.number().int(),
    repetitions: z.number().int(),
    budget: z.strictObject({ max_tokens: z.number().int().optional(), max_model_calls: z.number().int().optional() }),
    status: z.enum(EXPERIMENT_STATUSES),
    message: z.string().nullable().meta({ description: 'Why it failed, or what stopped it (the budget, in numbers).' }),
    progress: z.strictObject({ done: z.number().int(), total: z.number().int() }),
    spend: z.strictObject({ tokens: z.number().int(), model_calls: z.number().int() }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    completed_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'Experiment' });

export const experimentDetailView = experimentView
  .extend({
    summary: z
      .array(scorerSummaryView)
      .meta({ description: "Each scorer's mean, spread and pass rate over the results stored so far." }),
  })
  .meta({ id: 'ExperimentDetail' });

export const experimentResultView = z
  .strictObject({
    item_id: z.string(),
    repetition: z.number().int(),
    run_id: z.string().meta({ description: 'An ordinary run: its status, events and transcript read as any run’s.' }),
    run_status: z.string(),
    scores: z.array(scoreView),
    usage: usageView,
    latency_ms: z.number(),
    output: z.unknown().meta({ description: "The run's outputs by step id; null when it has none." }),
    error: z.string().nullable(),
    replay: replayDiffView
      .nullable()
      .meta({ description: 'Replay mode: which steps were replayed and which executed; null in live mode.' }),
    created_at: isoTimestamp,
  })
  .meta({ id: 'ExperimentResult' });

export function presentExperiment(doc: ExperimentDoc): z.infer<typeof experimentView> {
  return {
    id: doc._id,
    name: doc.name,
    dataset_id: doc.dataset_id,
    dataset_version: doc.dataset_version,
    workflow_id: doc.workflow_id,
    overrides: doc.overrides,
    mode: doc.mode,
    replay: doc.replay ?? null,
    scorers: doc.scorers as Record<string, unknown>[],
    concurrency: doc.concurrency,
    repetitions: doc.repetitions,
    budget: doc.budget,
    status: doc.status,
    message: doc.message,
    progress: { done: doc.done, total: doc.total },
    spend: doc.spend,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
    completed_at: isoOrNull(doc.completed_at),
  };
}

export function presentExperimentDetail(doc: ExperimentDoc, summary: ExperimentSummary) {
  return {
    ...presentExperiment(doc),
    summary: summary.scorers.map((s) => ({
      name: s.name,
      mean: s.stats.mean,
      sd: s.stats.sd,
      pass_rate: s.stats.pass_rate,
      n: s.stats.n,
    })),
  };
}

export function presentExperimentResult(doc: ExperimentResultDoc): z.infer<typeof experimentResultView> {
  return {
    item_id: doc.item_id,
    repetition: doc.repetition,
    run_id: doc.run_id,
    run_status: doc.run_status,
    scores: doc.scores,
    usage: doc.usage,
    latency_ms: doc.latency_ms,
    output: doc.output_json === null ? null : (JSON.parse(doc.output_json) as JsonValue),
    error: doc.error,
    replay: replayOf(doc),
    created_at: iso(doc.created_at),
  };
}

/** An experiment's stored results as the domain's comparison and JUnit writer read them. */
export function resultsOf(doc: ExperimentDoc, results: ExperimentResultDoc[]): ExperimentResults {
  return {
    experiment_id: doc._id,
    name: doc.name,
    started_at: doc.created_at.toISOString(),
    items: results.map((r) => ({
      item_id: r.item_id,
      repetition: r.repetition,
      scores: r.scores,
      usage: r.usage,
      latency_ms: r.latency_ms,
      ...(r.error !== null ? { error: r.error } : {}),
      ...(r.replay_json ? { replay: replayOf(r)!, steps: stepOutputs(r.output_json) } : {}),
    })),
  };
}

/** A replayed result's outputs by step, as the comparison diffs them against the baseline's. */
function stepOutputs(outputJson: string | null): { step_id: string; output: JsonValue }[] {
  const output = outputJson === null ? null : (JSON.parse(outputJson) as JsonValue);
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return [];
  return Object.entries(output).map(([step_id, value]) => ({ step_id, output: value ?? null }));
}
