/** The `Idempotency-Key` request header, checked: run starts, reruns and thread messages take it. */
import type { Context } from 'koa';
import { BadRequestError } from './errors';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** The header's key, or undefined when absent; present but malformed (or empty) is a 400. */
export function idempotencyKey(ctx: Context): string | undefined {
  // Present but empty (or only spaces, which HTTP strips) is refused like any other malformed key, not read as absent.
  if (ctx.request.headers['idempotency-key'] === undefined) return undefined;
  const key = ctx.get('Idempotency-Key');
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new BadRequestError('Idempotency-Key: 1–200 visible ASCII characters', 'invalid_field');
  }
  return key;
}
