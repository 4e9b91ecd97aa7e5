/** Public health endpoints: /livez (the process answers) and /readyz (MongoDB and Temporal reachable). */
import Router from '@koa/router';
import { pingDatabase } from '../../db/client';
import { pingTemporal } from '../../temporal/client';
import type { ApiDeps } from '../deps';
import { respond, respondError } from '../envelope';

export function healthRoutes(deps: ApiDeps): Router {
  const router = new Router();
  router.get('/livez', (ctx) => respond(ctx, 200, { status: 'ok' }));
  router.get('/readyz', async (ctx) => {
    const [mongodb, temporal] = await Promise.all([pingDatabase(deps.db), pingTemporal(deps.temporal)]);
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
