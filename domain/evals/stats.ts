/**
 * The few statistics the comparison needs, deterministic by construction (no random resampling): mean, sample
 * standard deviation, a Student-t 95 % interval for the mean, and percentiles by linear interpolation.
 */

/** Two-sided 95 % quantiles of Student's t for 1–30 degrees of freedom (the usual table, 3 decimals). */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const Z975 = 1.959964;

/** t(0.975, df): the table up to 30, then the Cornish–Fisher expansion (within 0.001 of the exact value there). */
export function tQuantile975(df: number): number {
  if (df < 1) return Number.POSITIVE_INFINITY;
  if (df <= T975.length) return T975[Math.floor(df) - 1]!;
  const z = Z975;
  return (
    z +
    (z ** 3 + z) / (4 * df) +
    (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2) +
    (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3)
  );
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
export function sampleSd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  let sq = 0;
  for (const v of values) sq += (v - m) ** 2;
  return Math.sqrt(sq / (values.length - 1));
}

/**
 * The 95 % t-interval for the mean, clipped to [lo, hi] (scores cannot leave [0, 1], so neither may their interval);
 * null for fewer than two values, where no spread is known.
 */
export function tInterval95(values: readonly number[], lo = -Infinity, hi = Infinity): [number, number] | null {
  if (values.length < 2) return null;
  const m = mean(values);
  const half = (tQuantile975(values.length - 1) * sampleSd(values)) / Math.sqrt(values.length);
  return [Math.max(lo, m - half), Math.min(hi, m + half)];
}

/** The p-th percentile (0–100) by linear interpolation between closest ranks; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (rank - below);
}

/** mean, p50 and p95 of `values`, or null when there are none. */
export interface Distribution {
  n: number;
  mean: number;
  p50: number;
  p95: number;
}

export function distribution(values: readonly number[]): Distribution | null {
  if (values.length === 0) return null;
  return { n: values.length, mean: mean(values), p50: percentile(values, 50), p95: percentile(values, 95) };
}
