/**
 * Rate limits (rate-limiter-flexible, MongoDB store shared by every API process, taken in small leases so a request
 * rarely costs a database write — see leased-limiter.ts): per client IP on all of /api/v1,
 * per API key on authenticated routes, and a stricter per-key budget for run starts. Over the limit → 429 envelope
 * with `Retry-After` (seconds). Limits come from RATE_LIMIT_IP_PER_MINUTE, RATE_LIMIT_PER_MINUTE and
 * RATE_LIMIT_RUNS_PER_MINUTE.
 *
 * Built once per process by `createRateLimits` in api/compose.ts (no module singletons) and handed to routers:
 * ```ts
 * router.get('/agents', ...authenticated(deps), handler); // authenticated() includes perKey
 * await startRun(deps, { ..., chargeRunStart: () => deps.limits.runStarts(ctx) }); // once the workflow is found
 * ```
 */
import type { Context, Middleware } from 'koa';
import type { Db } from 'mongodb';
import { RateLimiterMemory, RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config';
import { TooManyRequestsError } from '../http/errors';
import { LeasedLimiter } from './leased-limiter';
import '../http/state';

/** The collection holding the counters (TTL and unique indexes are created by db/indexes.ts). */
export const RATE_LIMIT_COLLECTION = 'rate_limits';

export interface RateLimits {
  /** Per client IP; mounted on the whole /api/v1 router (public routes included). */
  perIp: Middleware;
  /** Per API key; must run after requireUser (it is a no-op on a request without an authenticated user). */
  perKey: Middleware;
  /**
   * Per API key, for starting runs (stricter). Not a middleware: the start command charges it once the workflow (or
   * run) is found, so requests that end in 404 do not use up the budget. A no-op without an authenticated user.
   */
  runStarts: (ctx: Context) => Promise<void>;
  /** Deliveries to one inbound webhook (keyed by the hook id, once the hook is known). */
  hookDeliveries: LeasedLimiter;
}

const WINDOW_SECONDS = 60;

export function createRateLimits(config: Config, db: Db): RateLimits {
  const perIp = limiter(db, 'ip', config.RATE_LIMIT_IP_PER_MINUTE);
  const perKey = limiter(db, 'key', config.RATE_LIMIT_PER_MINUTE);
  const runStarts = limiter(db, 'run', config.RATE_LIMIT_RUNS_PER_MINUTE);
  return {
    perIp: limitBy(perIp, (ctx) => ctx.ip || 'unknown'),
    perKey: limitBy(perKey, apiKeyOf),
    runStarts: async (ctx) => {
      const key = apiKeyOf(ctx);
      if (key !== undefined) await consumeOrRefuse(runStarts, key);
    },
    hookDeliveries: limiter(db, 'hook', config.HOOK_RATE_LIMIT_PER_MINUTE),
  };
}

function limiter(db: Db, prefix: string, points: number): LeasedLimiter {
  const store = new RateLimiterMongo({
    storeClient: db,
    tableName: RATE_LIMIT_COLLECTION,
    keyPrefix: prefix,
    points,
    duration: WINDOW_SECONDS,
    // Indexes are ours (db/indexes.ts); the library would log to stderr on a failure.
    disableIndexesCreation: true,
    // A key over its limit is refused from memory until its window ends: a flood costs no database writes.
    inMemoryBlockOnConsumed: points + 1,
    // While MongoDB is unreachable, count in this process instead of failing every request with the limiter.
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: prefix, points, duration: WINDOW_SECONDS }),
  });
  return new LeasedLimiter(store, points);
}

/**
 * The counter key of an authenticated request: a hash of the presented key (never the key itself), so two keys
 * of one user have separate budgets and nothing secret is stored. Undefined when no user is authenticated.
 */
function apiKeyOf(ctx: Context): string | undefined {
  return ctx.state.user?.keyHash.slice(0, 32);
}

function limitBy(rl: LeasedLimiter, keyOf: (ctx: Context) => string | undefined): Middleware {
  return async (ctx, next) => {
    const key = keyOf(ctx);
    if (key !== undefined) await consumeOrRefuse(rl, key);
    await next();
  };
}

/** Takes one point of `key`'s budget, or refuses with 429 and `Retry-After`. */
export async function consumeOrRefuse(rl: LeasedLimiter, key: string): Promise<void> {
  try {
    await rl.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      throw new TooManyRequestsError(Math.max(1, Math.ceil(err.msBeforeNext / 1000)));
    }
    throw err;
  }
}
