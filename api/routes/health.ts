/** Public health endpoints: /livez (the process answers) and /readyz (MongoDB and Temporal reachable). */
import Router from '@koa/router';
import type { Db } from 'mongodb';
import type { Client } from '@temporalio/client';
import { pingDatabase } from '../../db/client';
import { pingTemporal } from '../../shared/temporal-client';
import type { ApiDeps } from '../deps';
import { respond, respondError } from '../http/envelope';

/**
 * /readyz is public and unauthenticated: its answer is reused for this long, and concurrent calls share one check, so
 * a flood of probes costs the backends at most one ping each per period.
 */
export const READINESS_CACHE_MS = 1_500;

interface Readiness {
  mongodb: boolean;
  temporal: boolean;
}

/** One in-flight or recent check, shared by every caller. */
function cachedReadiness(db: Db, temporal: Client, ttlMs: number): () => Promise<Readiness> {
  let last: { at: number; result: Promise<Readiness> } | undefined;
  return () => {
    const now = Date.now();
    if (last && now - last.at < ttlMs) return last.result;
    const result = Promise.all([pingDatabase(db), pingTemporal(temporal)]).then(([mongodb, t]) => ({
      mongodb,
      temporal: t,
    }));
    last = { at: now, result };
    return result;
  };
}

export function healthRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const readiness = cachedReadiness(deps.db, deps.temporal, READINESS_CACHE_MS);
  router.get('/livez', (ctx) => respond(ctx, 200, { status: 'ok' }));
  router.get('/readyz', async (ctx) => {
    const { mongodb, temporal } = await readiness();
    const down = [!mongodb && 'MongoDB', !temporal && 'Temporal'].filter(Boolean);
    if (down.length > 0) {
      ctx.set('Retry-After', '5');
      respondError(ctx, 503, `not ready: ${down.join(' and ')} unreachable`);
      return;
    }
    respond(ctx, 200, { status: 'ready', mongodb: 'up', temporal: 'up' });
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.contentType;
    ctx.body = await deps.metrics.metrics();
  });
  return router;
}
