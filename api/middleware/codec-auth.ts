/**
 * The codec endpoint's credential: CODEC_ACCESS_TOKEN, given either as the path segment /codec/<token>/… (the Temporal
 * Web UI cannot add headers, so its --ui-codec-endpoint URL carries it) or as `Authorization: Bearer <token>` (the
 * temporal CLI's --codec-auth). Ordinary API keys are never accepted here: decoding opens every tenant's payloads,
 * and nothing in a payload says which tenant it belongs to.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { UnauthorizedError } from '../http/errors';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function requireCodecToken(token: string): Middleware {
  // Comparing fixed-length digests keeps the comparison constant-time whatever the length of the guess.
  const expected = digest(token);
  const matches = (candidate: string | undefined) =>
    candidate !== undefined && timingSafeEqual(digest(candidate), expected);
  return async (ctx, next) => {
    const fromPath = (ctx as Context & { params?: Record<string, string> }).params?.token;
    const fromHeader = /^Bearer (\S+)$/i.exec(ctx.get('Authorization'))?.[1];
    // Both are checked (no short-circuit on which is present) so the timing says nothing about the path shape.
    const pathOk = matches(fromPath);
    const headerOk = matches(fromHeader);
    if (!pathOk && !headerOk) {
      throw new UnauthorizedError(
        'missing or invalid codec token: use the codec URL with its token, or send Authorization: Bearer <CODEC_ACCESS_TOKEN>',
      );
    }
    await next();
  };
}
