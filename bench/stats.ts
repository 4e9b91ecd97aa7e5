/** Small statistics for side-by-side arms: percentiles, medians with min/max, and ratios of medians. */

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/**
 * Runs two arms interleaved (A B, then B A, …) so that machine noise and ordering effects hit both alike; returns
 * each arm's samples in ms. The first `warmup` rounds are discarded.
 */
export async function interleave(
  n: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
  warmup = 5,
): Promise<{ a: number[]; b: number[] }> {
  const [outA, outB] = await interleaveArms(n, [a, b], warmup);
  return { a: outA!, b: outB! };
}

/**
 * Any number of arms, one sample of each per round, the order rotated each round (A B C, B C A, C A B, …) so that no
 * arm always runs after the same one; the first `warmup` rounds are dropped.
 */
export async function interleaveArms(n: number, arms: (() => Promise<number>)[], warmup = 5): Promise<number[][]> {
  const out = arms.map(() => [] as number[]);
  for (let i = 0; i < n + warmup; i++) {
    const round = new Array<number>(arms.length);
    for (let k = 0; k < arms.length; k++) {
      const arm = (i + k) % arms.length;
      round[arm] = await arms[arm]!();
    }
    if (i >= warmup) round.forEach((x, arm) => out[arm]!.push(x));
  }
  return out;
}

/** Milliseconds taken by `fn`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;

/** Least-squares slope of `ys` over `xs` (units of y per unit of x); NaN with fewer than two distinct xs. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}
