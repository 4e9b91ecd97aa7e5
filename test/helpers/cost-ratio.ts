/**
 * R10 timing without a wall-clock threshold: an attack and a harmless input of the same size are run interleaved in
 * the same test, and the ratio of their median times is what a test asserts.
 */
import { performance } from 'node:perf_hooks';

/** Floor of a timing, so two near-zero medians cannot make a meaningless ratio. */
const FLOOR_MS = 1;

/** Median time of `attack` ÷ median time of `harmless`, over `runs` interleaved rounds after one warm-up each. */
export async function costRatio(attack: () => unknown, harmless: () => unknown, runs = 5): Promise<number> {
  await attack();
  await harmless();
  const a: number[] = [];
  const h: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await attack();
    a.push(performance.now() - t0);
    t0 = performance.now();
    await harmless();
    h.push(performance.now() - t0);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  return Math.max(median(a), FLOOR_MS) / Math.max(median(h), FLOOR_MS);
}
