/**
 * The caller's identity, as the auth middleware (middleware/auth.ts) left it on the request, and the base URL the
 * links of an answer are built on.
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

/**
 * The absolute base of the links in an answer: PUBLIC_URL, else the request's own origin — protocol + Host (Koa 3's
 * ctx.origin is the Origin header). Set PUBLIC_URL in production so a link never depends on a client-supplied Host.
 */
export function baseUrlOf(publicUrl: string | undefined, ctx: Context): string {
  return publicUrl ?? `${ctx.protocol}://${ctx.host}`;
}

/** The absolute URL of a run's status read (`GET /api/v1/workflows/runs/:runId/status`), on the base of an answer's links. */
export function statusUrlOf(baseUrl: string, runId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/api/v1/workflows/runs/${runId}/status`;
}
