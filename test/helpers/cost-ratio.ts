/**
 * R10 timing without a wall-clock threshold: an attack and a harmless input of the same size are run interleaved in
 * the same test, and the ratio of their fastest times is what a test asserts. The fastest, not the median: a busy
 * machine (a GC pause, another process) only ever adds time to a round, so the minimum is the least noisy estimate of
 * what each input costs, and a ratio of minima does not trip when the machine is loaded.
 */
import { performance } from 'node:perf_hooks';

/** Floor of a timing, so two near-zero medians cannot make a meaningless ratio. */
const FLOOR_MS = 1;

/** Fastest time of `attack` ÷ fastest time of `harmless`, over `runs` interleaved rounds after one warm-up each. */
export async function costRatio(attack: () => unknown, harmless: () => unknown, runs = 7): Promise<number> {
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
  return Math.max(Math.min(...a), FLOOR_MS) / Math.max(Math.min(...h), FLOOR_MS);
}
