/**
 * The caller's webhook signing secret: GET returns it (made with the user), POST …/rotate replaces it. Each route
 * acts on the authenticated user only, so there is no id another user could name.
 */
import Router from '@koa/router';
import { userId } from '../http/caller';
import { readWebhookSecret, rotateWebhookSecret } from '../../db/webhook-secrets';
import { respond } from '../http/envelope';
import { NotFoundError } from '../http/errors';
import { presentWebhookSecret } from '../presenters/webhook-secret';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';

/** A live key always names an existing user (users are never deleted, db/users.ts), so null is a broken invariant. */
function existing<T>(value: T | null): T {
  if (value === null) throw new Error('the authenticated user has no user document');
  return value;
}

export function webhookRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/webhooks' });
  const auth = authenticated(deps);

  router.get('/secret', ...auth, async (ctx) => {
    const secret = await readWebhookSecret(deps.db, userId(ctx));
    // Every user is made with one; a user document made by hand without one gets it from a rotation.
    if (!secret) throw new NotFoundError('no webhook secret yet: POST /api/v1/webhooks/secret/rotate makes one');
    ctx.set('Cache-Control', 'no-store');
    respond(ctx, 200, presentWebhookSecret(secret));
  });

  router.post('/secret/rotate', ...auth, async (ctx) => {
    const secret = existing(await rotateWebhookSecret(deps.db, userId(ctx)));
    ctx.state.log.info('webhook secret rotated');
    ctx.set('Cache-Control', 'no-store');
    respond(ctx, 200, presentWebhookSecret(secret));
  });

  return router;
}
