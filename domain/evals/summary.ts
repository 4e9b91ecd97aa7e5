/**
 * One experiment's numbers on their own: per scorer the mean, spread, 95 % interval and pass rate; tokens, model
 * calls, cost and latency as distributions. The comparison puts two of these side by side; a run without a baseline
 * (the CLI's table, the experiment page) shows one.
 */
import type { ExperimentResults, ItemResult } from './results';
import { distribution, mean, sampleSd, tInterval95, type Distribution } from './stats';

/** One scorer's statistics over all its item × repetition scores. */
export interface ScorerStats {
  n: number;
  mean: number;
  sd: number;
  /** 95 % t-interval for the mean, clipped to [0, 1]; null with fewer than two scores. */
  ci95: [number, number] | null;
  pass_rate: number;
}

/** Per item run: tokens (input + output), model calls, cost and latency, and how many runs failed. */
export interface UsageSummary {
  tokens: Distribution | null;
  llm_calls: Distribution | null;
  /** Null when no item has a cost (no price table covers the models). */
  cost: Distribution | null;
  latency_ms: Distribution | null;
  errors: number;
}

export interface ExperimentSummary {
  experiment_id: string;
  items: number;
  /** By scorer name, in name order. */
  scorers: { name: string; stats: ScorerStats }[];
  usage: UsageSummary;
}

/** Every score of `items`, grouped by scorer name (insertion order). */
export function scoresByScorer(items: ItemResult[]): Map<string, { score: number; pass: boolean }[]> {
  const out = new Map<string, { score: number; pass: boolean }[]>();
  for (const item of items) {
    for (const s of item.scores) {
      const list = out.get(s.name) ?? [];
      list.push({ score: s.score, pass: s.pass });
      out.set(s.name, list);
    }
  }
  return out;
}

/** Statistics of one scorer's scores; null when there are none. */
export function scorerStats(values: { score: number; pass: boolean }[] | undefined): ScorerStats | null {
  if (!values || values.length === 0) return null;
  const scores = values.map((v) => v.score);
  return {
    n: scores.length,
    mean: mean(scores),
    sd: sampleSd(scores),
    ci95: tInterval95(scores, 0, 1),
    pass_rate: values.filter((v) => v.pass).length / values.length,
  };
}

export function usageSummary(items: ItemResult[]): UsageSummary {
  const costs = items.flatMap((i) => (i.usage.cost === undefined ? [] : [i.usage.cost]));
  return {
    tokens: distribution(items.map((i) => i.usage.input_tokens + i.usage.output_tokens)),
    llm_calls: distribution(items.map((i) => i.usage.llm_calls)),
    cost: distribution(costs),
    latency_ms: distribution(items.map((i) => i.latency_ms)),
    errors: items.filter((i) => i.error !== undefined).length,
  };
}

/** The summary of one experiment's results. */
export function summarizeExperiment(results: ExperimentResults): ExperimentSummary {
  const scorers = [...scoresByScorer(results.items).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, values]) => ({ name, stats: scorerStats(values)! }));
  return {
    experiment_id: results.experiment_id,
    items: new Set(results.items.map((i) => i.item_id)).size,
    scorers,
    usage: usageSummary(results.items),
  };
}
