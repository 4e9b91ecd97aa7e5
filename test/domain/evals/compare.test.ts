/**
 * The comparison of two experiments: statistics per scorer, item verdicts, cost and latency side by side, the step
 * diff of replayed items, and the CI gate's regression rule. Properties: swapping the sides negates every delta and
 * swaps improved with regressed; comparing an experiment with itself changes nothing and regresses nothing.
 */
import fc from 'fast-check';
import { compareExperiments, compareOptionsSchema, type Comparison } from '../../../domain/evals/compare';
import type { ExperimentResults, ItemResult } from '../../../domain/evals/results';
import { percentile, sampleSd, tInterval95, tQuantile975 } from '../../../domain/evals/stats';
import { summarizeExperiment } from '../../../domain/evals/summary';

function item(item_id: string, scores: Record<string, number>, over: Partial<ItemResult> = {}): ItemResult {
  return {
    item_id,
    repetition: 0,
    scores: Object.entries(scores).map(([name, score]) => ({ name, score, pass: score >= 0.5, reason: 'r' })),
    usage: { input_tokens: 100, output_tokens: 50, llm_calls: 1, cost: 0.01 },
    latency_ms: 1000,
    ...over,
  };
}

const experiment = (experiment_id: string, items: ItemResult[]): ExperimentResults => ({ experiment_id, items });

describe('statistics', () => {
  it('computes the sample sd, the t-interval and interpolated percentiles', () => {
    const values = [0.2, 0.4, 0.6, 0.8];
    expect(sampleSd(values)).toBeCloseTo(0.2582, 4);
    // mean 0.5 ± t(3) 3.182 × 0.2582 / 2
    const [lo, hi] = tInterval95(values)!;
    expect(lo).toBeCloseTo(0.5 - 0.4108, 3);
    expect(hi).toBeCloseTo(0.5 + 0.4108, 3);
    expect(tInterval95(values, 0, 1)).toEqual([expect.closeTo(0.0892, 3), expect.closeTo(0.9108, 3)]);
    expect(tInterval95([1, 1, 0, 0], 0, 1)![0]).toBe(0);
    expect(tInterval95([0.5])).toBeNull();
    expect(percentile([10, 20, 30, 40, 50], 50)).toBe(30);
    expect(percentile([10, 20, 30, 40, 50], 95)).toBeCloseTo(48);
    expect(percentile([7], 95)).toBe(7);
  });

  it('t quantiles follow the table and approach the normal quantile', () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(31)).toBeCloseTo(2.0395, 3);
    expect(tQuantile975(60)).toBeCloseTo(2.0003, 3);
    expect(tQuantile975(1e6)).toBeCloseTo(1.96, 3);
  });
});

describe('compareExperiments', () => {
  const baseline = experiment('exp_a', [
    item('q1', { exact: 1, judge: 0.8 }),
    item('q2', { exact: 1, judge: 0.6 }),
    item('q3', { exact: 0, judge: 0.4 }),
    item('q4', { exact: 1, judge: 0.9 }),
  ]);
  const candidate = experiment('exp_b', [
    item(
      'q1',
      { exact: 1, judge: 0.8 },
      { usage: { input_tokens: 300, output_tokens: 100, llm_calls: 3, cost: 0.04 } },
    ),
    item('q2', { exact: 0, judge: 0.6 }, { latency_ms: 3000 }),
    item('q3', { exact: 1, judge: 0.5 }),
    item('q5', { exact: 1, judge: 1 }),
  ]);

  it('gives each scorer its mean, spread and interval on both sides', () => {
    const c = compareExperiments(baseline, candidate);
    expect(c.scorers.map((s) => s.name)).toEqual(['exact', 'judge']);
    const exact = c.scorers[0]!;
    expect(exact.baseline).toMatchObject({ n: 4, mean: 0.75, pass_rate: 0.75, sd: 0.5 });
    expect(exact.baseline!.ci95).toEqual([0, 1]);
    expect(exact.delta).toBe(0);
    // judge: (0.8 + 0.6 + 0.5 + 1) / 4 − (0.8 + 0.6 + 0.4 + 0.9) / 4
    expect(c.scorers[1]!.delta).toBeCloseTo(0.725 - 0.675, 10);
  });

  it('marks each item improved, regressed, unchanged or on one side only', () => {
    const c = compareExperiments(baseline, candidate);
    expect(c.items.map((i) => [i.item_id, i.change])).toEqual([
      ['q1', 'unchanged'],
      ['q2', 'regressed'],
      ['q3', 'improved'],
      ['q4', 'only_baseline'],
      ['q5', 'only_candidate'],
    ]);
    expect(c.items[1]!.scorers[0]).toEqual({
      name: 'exact',
      baseline: 1,
      candidate: 0,
      delta: -1,
      change: 'regressed',
      pass_change: 'pass_to_fail',
    });
    expect(c.counts).toEqual({
      improved: 1,
      regressed: 1,
      mixed: 0,
      unchanged: 1,
      only_baseline: 1,
      only_candidate: 1,
    });
  });

  it('a tolerance keeps small moves unchanged; an item up on one scorer and down on another is mixed', () => {
    const a = experiment('a', [item('q', { x: 0.7, y: 0.7 })]);
    const b = experiment('b', [item('q', { x: 0.72, y: 0.9 })]);
    expect(compareExperiments(a, b, { tolerance: 0.05 }).items[0]!.scorers.map((s) => s.change)).toEqual([
      'unchanged',
      'improved',
    ]);
    const mixed = experiment('m', [item('q', { x: 0.9, y: 0.1 })]);
    expect(compareExperiments(a, mixed).items[0]!.change).toBe('mixed');
  });

  it('averages repetitions per item, and an item passes only when every repetition passes', () => {
    const a = experiment('a', [item('q', { x: 1 }), item('q', { x: 1 }, { repetition: 1 })]);
    const b = experiment('b', [item('q', { x: 1 }), item('q', { x: 0 }, { repetition: 1 })]);
    const s = compareExperiments(a, b).items[0]!.scorers[0]!;
    expect(s).toMatchObject({ baseline: 1, candidate: 0.5, pass_change: 'pass_to_fail' });
  });

  it('puts tokens, model calls, cost and latency side by side (mean, p50, p95)', () => {
    const c = compareExperiments(baseline, candidate);
    expect(c.usage.baseline.tokens).toEqual({ n: 4, mean: 150, p50: 150, p95: 150 });
    expect(c.usage.candidate.tokens).toEqual({ n: 4, mean: 212.5, p50: 150, p95: expect.closeTo(362.5, 6) });
    expect(c.usage.candidate.cost!.mean).toBeCloseTo(0.0175, 10);
    expect(c.usage.candidate.latency_ms).toMatchObject({ mean: 1500, p50: 1000 });
    const noPrices = experiment('x', [
      item('q', { x: 1 }, { usage: { input_tokens: 1, output_tokens: 1, llm_calls: 1 } }),
    ]);
    expect(compareExperiments(noPrices, noPrices).usage.baseline.cost).toBeNull();
  });

  it('says which steps of a replayed item produced a different output', () => {
    const steps = (fetch: unknown) => [
      { step_id: 'fetch', output: fetch as never },
      { step_id: 'summarize', output: { text: 'same', n: 1 } },
    ];
    const a = experiment('a', [item('q', { x: 1 }, { steps: [...steps('v1'), { step_id: 'old', output: null }] })]);
    const b = experiment('b', [
      item(
        'q',
        { x: 1 },
        {
          steps: [
            { step_id: 'summarize', output: { n: 1, text: 'same' } },
            { step_id: 'fetch', output: 'v2' },
            { step_id: 'new', output: 1 },
          ],
        },
      ),
    ]);
    expect(compareExperiments(a, b).items[0]!.steps).toEqual({
      changed: ['fetch'],
      unchanged: ['summarize'],
      added: ['new'],
      removed: ['old'],
    });
  });
});

describe('summarizeExperiment', () => {
  it('gives one experiment’s numbers on their own, as the comparison shows each side', () => {
    const results = experiment('exp_a', [
      item('q1', { b: 1, a: 0.5 }),
      item('q1', { b: 0, a: 0.5 }, { repetition: 1, error: 'failed' }),
    ]);
    const summary = summarizeExperiment(results);
    expect(summary).toMatchObject({ experiment_id: 'exp_a', items: 1 });
    expect(summary.scorers.map((s) => [s.name, s.stats.mean, s.stats.pass_rate])).toEqual([
      ['a', 0.5, 1],
      ['b', 0.5, 0.5],
    ]);
    expect(summary.usage.errors).toBe(1);
    const c = compareExperiments(results, experiment('exp_b', []));
    expect(c.scorers.map((s) => s.baseline)).toEqual(summary.scorers.map((s) => s.stats));
    expect(c.usage.baseline).toEqual(summary.usage);
  });
});

describe('the regression verdict', () => {
  const a = experiment('a', [item('q1', { x: 1 }), item('q2', { x: 0.8 }), item('q3', { x: 0.6 })]);

  it('fires when a mean drops by more than the threshold, and says by how much', () => {
    const b = experiment('b', [item('q1', { x: 0.9 }), item('q2', { x: 0.7 }), item('q3', { x: 0.5 })]);
    expect(compareExperiments(a, b, { regression_threshold: 0.1 }).regression).toEqual({
      regressed: false,
      reasons: [],
    });
    expect(compareExperiments(a, b, { regression_threshold: 0.05 }).regression).toEqual({
      regressed: true,
      reasons: ['x: mean 0.8 → 0.7 (-0.1, a drop of more than 0.05)'],
    });
  });

  it('a drop of exactly the threshold is not a regression, float noise included (0.90 → 0.85)', () => {
    const base = experiment('a', [item('q', { x: 0.9 })]);
    expect(compareExperiments(base, experiment('b', [item('q', { x: 0.85 })])).regression.regressed).toBe(false);
    expect(compareExperiments(base, experiment('b', [item('q', { x: 0.84 })])).regression.regressed).toBe(true);
  });

  it('its options are checked by one schema', () => {
    expect(compareOptionsSchema.parse({ regression_threshold: 0.02, fail_on: 'any_item' })).toEqual({
      regression_threshold: 0.02,
      fail_on: 'any_item',
    });
    expect(compareOptionsSchema.safeParse({ regression_threshold: -0.1 }).success).toBe(false);
    expect(compareOptionsSchema.safeParse({ fail_on: 'always' }).success).toBe(false);
  });

  it('with fail_on any_item, also fires on one item turning from pass to fail', () => {
    const b = experiment('b', [item('q1', { x: 1 }), item('q2', { x: 1 }), item('q3', { x: 0.4 })]);
    expect(compareExperiments(a, b).regression.regressed).toBe(false);
    expect(compareExperiments(a, b, { fail_on: 'any_item' }).regression).toEqual({
      regressed: true,
      reasons: ['item q3: x passed in the baseline, fails now'],
    });
  });
});

describe('properties', () => {
  const scoreArb = fc.double({ min: 0, max: 1, noNaN: true });
  const itemsArb = fc
    .array(
      fc.record({
        id: fc.constantFrom('q1', 'q2', 'q3', 'q4'),
        rep: fc.nat(2),
        x: scoreArb,
        y: fc.option(scoreArb, { nil: undefined }),
        tokens: fc.nat(1000),
        latency: fc.nat(10_000),
      }),
      { maxLength: 12 },
    )
    .map((rows) => {
      // One result per item × repetition, as an experiment records them.
      const seen = new Set<string>();
      return rows
        .filter((r) => !seen.has(`${r.id}/${r.rep}`) && seen.add(`${r.id}/${r.rep}`))
        .map((r) =>
          item(r.id, r.y === undefined ? { x: r.x } : { x: r.x, y: r.y }, {
            repetition: r.rep,
            usage: { input_tokens: r.tokens, output_tokens: 0, llm_calls: 1 },
            latency_ms: r.latency,
          }),
        );
    });
  const swap = {
    improved: 'regressed',
    regressed: 'improved',
    unchanged: 'unchanged',
    mixed: 'mixed',
    only_baseline: 'only_candidate',
    only_candidate: 'only_baseline',
  } as const;

  it('is symmetric: B against A negates the deltas and swaps improved and regressed', () => {
    fc.assert(
      fc.property(itemsArb, itemsArb, fc.double({ min: 0, max: 0.2, noNaN: true }), (x, y, tolerance) => {
        const ab = compareExperiments(experiment('a', x), experiment('b', y), { tolerance });
        const ba = compareExperiments(experiment('b', y), experiment('a', x), { tolerance });
        expect(ba.scorers.map((s) => [s.baseline, s.candidate, s.delta === null ? null : -s.delta])).toEqual(
          ab.scorers.map((s) => [s.candidate, s.baseline, s.delta]),
        );
        expect(ba.items.map((i) => swap[i.change])).toEqual(ab.items.map((i) => i.change));
        expect(ba.usage).toEqual({ baseline: ab.usage.candidate, candidate: ab.usage.baseline });
      }),
    );
  });

  it('an experiment against itself: every item unchanged, no regression, deltas 0', () => {
    fc.assert(
      fc.property(itemsArb, (x) => {
        const c: Comparison = compareExperiments(experiment('a', x), experiment('a', x), { fail_on: 'any_item' });
        expect(c.items.every((i) => i.change === 'unchanged')).toBe(true);
        expect(c.scorers.every((s) => s.delta === 0)).toBe(true);
        expect(c.regression.regressed).toBe(false);
      }),
    );
  });

  it('means and intervals stay in [0, 1] and the interval holds the mean', () => {
    fc.assert(
      fc.property(itemsArb, (x) => {
        for (const s of compareExperiments(experiment('a', x), experiment('b', [])).scorers) {
          const st = s.baseline!;
          expect(st.mean).toBeGreaterThanOrEqual(0);
          expect(st.mean).toBeLessThanOrEqual(1);
          if (st.ci95) {
            expect(st.ci95[0]).toBeGreaterThanOrEqual(0);
            expect(st.ci95[1]).toBeLessThanOrEqual(1);
            expect(st.ci95[0]).toBeLessThanOrEqual(st.mean + 1e-12);
            expect(st.ci95[1]).toBeGreaterThanOrEqual(st.mean - 1e-12);
          }
        }
      }),
    );
  });
});
