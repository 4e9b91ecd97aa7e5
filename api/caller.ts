/**
 * The caller's identity, as the auth middleware (middleware/auth.ts) left it on the request.
 *
 * One helper for every route file, so "who is asking" is read the same way everywhere and the owner filter of
 * every query starts from the same value.
 */
import type { Context } from 'koa';
import './state';

/**
 * The authenticated user's id.
 *
 * Throws a plain Error (a 500), not a 401: `requireUser` runs before every route that calls this, so a missing user
 * is a routing bug — a route mounted outside authentication — and must not look like a credentials problem.
 */
export function userId(ctx: Context): string {
  const user = ctx.state.user;
  if (!user) throw new Error('route mounted without authentication');
  return user.id;
}
