/**
 * An experiment against a baseline (issue #47 item 5), the arithmetic only: per scorer the mean, its spread and a
 * 95 % interval on each side; per item improved / regressed / unchanged; cost, tokens and latency side by side; the
 * per-step difference of replayed items; and the regression verdict the CI gate exits on. Deterministic: the same
 * results always give the same comparison (no resampling, items and scorers in sorted order).
 *
 * Symmetric by design: comparing B against A gives A against B's deltas negated, improved and regressed swapped.
 */
import { z } from 'zod';
import { canonicalJson } from '../json';
import { fmt } from './result';
import type { ExperimentResults, ItemResult } from './results';
import { mean } from './stats';
import { scorerStats, scoresByScorer, usageSummary, type ScorerStats, type UsageSummary } from './summary';

/** The comparison's settings as a request or the CLI gives them (the source of the API's and flags' rules). */
export const compareOptionsSchema = z.strictObject({
  tolerance: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('An item score moving by at most this much (absolute) is unchanged. Default 0.'),
  regression_threshold: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("A regression is a scorer's mean dropping by more than this (absolute). Default 0.05."),
  fail_on: z
    .enum(['mean', 'any_item'])
    .optional()
    .describe(
      'mean: only a mean drop beyond the threshold regresses; any_item: so does an item and scorer that passed ' +
        'on every baseline repetition and fails on one now. Default mean.',
    ),
});

export type CompareOptions = z.infer<typeof compareOptionsSchema>;

export interface ScorerComparison {
  name: string;
  baseline: ScorerStats | null;
  candidate: ScorerStats | null;
  /** candidate mean − baseline mean; null when one side lacks the scorer. */
  delta: number | null;
}

export type Change = 'improved' | 'regressed' | 'unchanged';

export interface ItemScorerComparison {
  name: string;
  /** Mean over the item's repetitions. */
  baseline: number | null;
  candidate: number | null;
  delta: number | null;
  change: Change | null;
  /** Passed on every repetition on one side and not on the other. */
  pass_change: 'pass_to_fail' | 'fail_to_pass' | null;
}

export interface StepDiff {
  changed: string[];
  unchanged: string[];
  /** Steps only the candidate ran / only the baseline ran. */
  added: string[];
  removed: string[];
}

export interface ItemComparison {
  item_id: string;
  /**
   * Improved: some scorer rose (beyond the tolerance) or turned to pass, none fell. Regressed: the reverse. Mixed:
   * both — kept apart rather than folded into either, so that swapping the sides swaps the verdicts.
   * `only_baseline` / `only_candidate`: the item ran on one side only.
   */
  change: Change | 'mixed' | 'only_baseline' | 'only_candidate';
  scorers: ItemScorerComparison[];
  /** For items with step outputs on both sides (replay mode): repetition 0 against repetition 0. */
  steps?: StepDiff;
  /**
   * For items the candidate ran in replay mode (repetition 0): each step replayed from the recorded run or executed,
   * and for executed steps whether (and how) the output changed from the recorded one.
   */
  replay?: NonNullable<ItemResult['replay']>;
}

export interface Regression {
  regressed: boolean;
  /** Each rule that fired, as a sentence ("exact: mean 0.9 → 0.8 (−0.1, more than 0.05)"). */
  reasons: string[];
}

export interface Comparison {
  baseline_id: string;
  candidate_id: string;
  scorers: ScorerComparison[];
  items: ItemComparison[];
  counts: Record<ItemComparison['change'], number>;
  usage: { baseline: UsageSummary; candidate: UsageSummary };
  regression: Regression;
}

/** Float noise (0.1 + 0.2) must never turn "unchanged" into a change or a mean at the threshold into a regression. */
const EPSILON = 1e-9;

function byItem(items: ItemResult[]): Map<string, ItemResult[]> {
  const out = new Map<string, ItemResult[]>();
  for (const item of items) {
    const list = out.get(item.item_id) ?? [];
    list.push(item);
    out.set(item.item_id, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.repetition - b.repetition);
  return out;
}

/** Per scorer: the mean score over the repetitions and whether every repetition passed. */
function itemScores(reps: ItemResult[] | undefined): Map<string, { mean: number; allPass: boolean }> {
  const out = new Map<string, { mean: number; allPass: boolean }>();
  for (const [name, values] of scoresByScorer(reps ?? [])) {
    out.set(name, { mean: mean(values.map((v) => v.score)), allPass: values.every((v) => v.pass) });
  }
  return out;
}

function changeOf(delta: number, tolerance: number): Change {
  if (delta > tolerance + EPSILON) return 'improved';
  if (delta < -tolerance - EPSILON) return 'regressed';
  return 'unchanged';
}

function compareItem(
  id: string,
  base: ItemResult[] | undefined,
  cand: ItemResult[] | undefined,
  tolerance: number,
): ItemComparison {
  const b = itemScores(base);
  const c = itemScores(cand);
  const names = [...new Set([...b.keys(), ...c.keys()])].sort();
  const scorers = names.map((name): ItemScorerComparison => {
    const bs = b.get(name);
    const cs = c.get(name);
    const delta = bs && cs ? cs.mean - bs.mean : null;
    let passChange: ItemScorerComparison['pass_change'] = null;
    if (bs && cs && bs.allPass !== cs.allPass) passChange = bs.allPass ? 'pass_to_fail' : 'fail_to_pass';
    return {
      name,
      baseline: bs?.mean ?? null,
      candidate: cs?.mean ?? null,
      delta,
      change: delta === null ? null : changeOf(delta, tolerance),
      pass_change: passChange,
    };
  });
  let change: ItemComparison['change'];
  if (!base) change = 'only_candidate';
  else if (!cand) change = 'only_baseline';
  else {
    const down = scorers.some((s) => s.change === 'regressed' || s.pass_change === 'pass_to_fail');
    const up = scorers.some((s) => s.change === 'improved' || s.pass_change === 'fail_to_pass');
    change = down && up ? 'mixed' : down ? 'regressed' : up ? 'improved' : 'unchanged';
  }
  const steps = base?.[0]?.steps && cand?.[0]?.steps ? stepDiff(base[0].steps, cand[0].steps) : undefined;
  const replay = cand?.[0]?.replay;
  return { item_id: id, change, scorers, ...(steps ? { steps } : {}), ...(replay ? { replay } : {}) };
}

function stepDiff(base: NonNullable<ItemResult['steps']>, cand: NonNullable<ItemResult['steps']>): StepDiff {
  const b = new Map(base.map((s) => [s.step_id, canonicalJson(s.output)]));
  const c = new Map(cand.map((s) => [s.step_id, canonicalJson(s.output)]));
  const diff: StepDiff = { changed: [], unchanged: [], added: [], removed: [] };
  for (const id of [...new Set([...b.keys(), ...c.keys()])].sort()) {
    if (!c.has(id)) diff.removed.push(id);
    else if (!b.has(id)) diff.added.push(id);
    else if (b.get(id) === c.get(id)) diff.unchanged.push(id);
    else diff.changed.push(id);
  }
  return diff;
}

/**
 * The regression rule of the CI gate:
 * 1. a scorer both sides have whose candidate mean is lower than the baseline mean by more than
 *    `regression_threshold` (absolute) is a regression;
 * 2. with `fail_on: 'any_item'`, so is any item and scorer that passed on every baseline repetition and fails on
 *    at least one candidate repetition.
 * Scorers or items present on one side only are not judged (they are reported in the comparison).
 */
function regressionOf(
  scorers: ScorerComparison[],
  items: ItemComparison[],
  options: Required<CompareOptions>,
): Regression {
  const reasons: string[] = [];
  for (const s of scorers) {
    if (s.delta === null || !s.baseline || !s.candidate) continue;
    if (-s.delta > options.regression_threshold + EPSILON) {
      reasons.push(
        `${s.name}: mean ${fmt(s.baseline.mean)} → ${fmt(s.candidate.mean)} (${fmt(s.delta)}, a drop of more than ${options.regression_threshold})`,
      );
    }
  }
  if (options.fail_on === 'any_item') {
    for (const item of items) {
      for (const s of item.scorers) {
        if (s.pass_change === 'pass_to_fail')
          reasons.push(`item ${item.item_id}: ${s.name} passed in the baseline, fails now`);
      }
    }
  }
  return { regressed: reasons.length > 0, reasons };
}

/** Compares `candidate` with `baseline`. */
export function compareExperiments(
  baseline: ExperimentResults,
  candidate: ExperimentResults,
  options: CompareOptions = {},
): Comparison {
  const opts: Required<CompareOptions> = {
    tolerance: options.tolerance ?? 0,
    regression_threshold: options.regression_threshold ?? 0.05,
    fail_on: options.fail_on ?? 'mean',
  };
  const b = scoresByScorer(baseline.items);
  const c = scoresByScorer(candidate.items);
  const scorers = [...new Set([...b.keys(), ...c.keys()])].sort().map((name): ScorerComparison => {
    const bs = scorerStats(b.get(name));
    const cs = scorerStats(c.get(name));
    return { name, baseline: bs, candidate: cs, delta: bs && cs ? cs.mean - bs.mean : null };
  });
  const bi = byItem(baseline.items);
  const ci = byItem(candidate.items);
  const items = [...new Set([...bi.keys(), ...ci.keys()])]
    .sort()
    .map((id) => compareItem(id, bi.get(id), ci.get(id), opts.tolerance));
  const counts: Comparison['counts'] = {
    improved: 0,
    regressed: 0,
    mixed: 0,
    unchanged: 0,
    only_baseline: 0,
    only_candidate: 0,
  };
  for (const item of items) counts[item.change] += 1;
  return {
    baseline_id: baseline.experiment_id,
    candidate_id: candidate.experiment_id,
    scorers,
    items,
    counts,
    usage: { baseline: usageSummary(baseline.items), candidate: usageSummary(candidate.items) },
    regression: regressionOf(scorers, items, opts),
  };
}
