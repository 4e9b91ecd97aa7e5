/** The response envelope of PRODUCT.md: exactly `{data, error}`, one of them null. */
import type { Context } from 'koa';

export interface Envelope<T> {
  data: T | null;
  error: string | null;
}

export function respond<T>(ctx: Context, status: number, data: T): void {
  ctx.status = status;
  ctx.body = { data, error: null } satisfies Envelope<T>;
}

export function respondError(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  ctx.body = { data: null, error: message } satisfies Envelope<never>;
}
