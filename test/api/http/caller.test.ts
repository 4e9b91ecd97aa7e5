/**
 * userId(ctx): the one reading of the authenticated caller, behind the app's error mapping. Without authentication in
 * front it is a routing bug (a 500), not a 401. The routes' owner filters are tested through them (test/api/**).
 */
import Koa from 'koa';
import request from 'supertest';
import { userId } from '../../../api/http/caller';
import { errorMiddleware } from '../../../api/middleware/errors';
import { silentLogger } from '../../helpers/stack';

function appWith(user: { id: string } | undefined): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    // What request-context and auth leave on the state, as far as userId reads it.
    ctx.state.bindLog = () => undefined;
    if (user) ctx.state.user = { id: user.id, keyId: 'key_1', keyHash: 'h' };
    await next();
  });
  app.use(errorMiddleware(silentLogger, 1024));
  app.use((ctx) => {
    ctx.body = { data: { user: userId(ctx) }, error: null };
  });
  return app;
}

it("reads the authenticated user's id", async () => {
  const res = await request(appWith({ id: 'usr_caller' }).callback()).get('/');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ data: { user: 'usr_caller' }, error: null });
});

it('answers a route mounted without authentication with a 500, not a 401', async () => {
  const res = await request(appWith(undefined).callback()).get('/');
  expect(res.status).toBe(500);
  expect(res.body.data).toBeNull();
});
