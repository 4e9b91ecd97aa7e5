/**
 * A shared (MongoDB) rate limiter that does not cost a database write per request: each process takes points from
 * the shared counter in small leases and spends them locally until the lease or its window runs out. Across all
 * processes no more than the configured points are granted per window (a lease is counted in full when taken); the
 * price is that up to `lease - 1` points per process and key may go unused in a window. With small limits the lease
 * is one point, i.e. exact counting.
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

interface Lease {
  remaining: number;
  /** End of the shared window the points were taken from (epoch ms). */
  expiresAt: number;
}

/** Leases are 2% of the budget (at least one point): ≤ 50 shared writes per key and window. */
export function leaseSize(points: number): number {
  return Math.max(1, Math.floor(points / 50));
}

/** Above this many cached leases, expired ones are swept (many distinct IPs must not grow memory without bound). */
const SWEEP_THRESHOLD = 10_000;

export class LeasedLimiter {
  private readonly leases = new Map<string, Lease>();
  /**
   * The lease being taken for a key. Requests that find none left wait for it instead of each taking one: otherwise a
   * burst of N concurrent requests on a cold key takes N leases at once, and with N near 50 the whole window's budget
   * is counted after N requests.
   */
  private readonly taking = new Map<string, Promise<void>>();

  private readonly lease: number;

  constructor(
    private readonly store: RateLimiterAbstract,
    private readonly points: number,
  ) {
    this.lease = leaseSize(points);
  }

  /** Resolves when `key` may proceed; rejects with a RateLimiterRes (carrying msBeforeNext) when over the limit. */
  async consume(key: string): Promise<void> {
    for (;;) {
      const held = this.leases.get(key);
      if (held && held.remaining > 0 && Date.now() < held.expiresAt) {
        held.remaining--;
        return;
      }
      const pending = this.taking.get(key);
      if (!pending) break;
      // Its lease (if it got one) is checked on the next pass; its refusal refuses the requests waiting for it too.
      await pending;
    }
    const take = this.take(key);
    this.taking.set(key, take);
    try {
      await take;
    } finally {
      this.taking.delete(key);
    }
  }

  /** Takes a lease from the shared counter and spends its first point; rejects with the counter's refusal. */
  private async take(key: string): Promise<void> {
    const now = Date.now();
    try {
      const res = await this.store.consume(key, this.lease);
      this.keep(key, { remaining: this.lease - 1, expiresAt: now + res.msBeforeNext });
    } catch (err) {
      // consumedPoints below the lease means the refusal came from the in-memory block, not from the counter.
      if (!(err instanceof RateLimiterRes) || this.lease === 1 || err.consumedPoints < this.lease) throw err;
      // The counter now includes the whole lease; whatever was still free before it is ours to spend.
      const free = this.points - (err.consumedPoints - this.lease);
      if (free <= 0) throw err;
      this.keep(key, { remaining: Math.min(free, this.lease) - 1, expiresAt: now + err.msBeforeNext });
    }
  }

  private keep(key: string, lease: Lease): void {
    if (this.leases.size >= SWEEP_THRESHOLD) {
      const now = Date.now();
      for (const [k, l] of this.leases) if (l.expiresAt <= now || l.remaining <= 0) this.leases.delete(k);
    }
    this.leases.set(key, lease);
  }
}
