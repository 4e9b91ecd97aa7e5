/** Deny by default: every route behind this middleware needs `Authorization: Bearer <api key>`. */
import type { Middleware } from 'koa';
import { hashKey } from '../../db/users';
import { UnauthorizedError } from '../http/errors';
import type { KeyCache } from './key-cache';
import '../http/state';

export function requireUser(keys: KeyCache): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match?.[1]) throw new UnauthorizedError();
    const keyHash = hashKey(match[1]);
    const identity = await keys.authenticate(match[1], keyHash);
    if (!identity) throw new UnauthorizedError('invalid or revoked API key');
    ctx.state.user = { id: identity.user_id, keyId: identity.key_id, keyHash };
    ctx.state.bindLog({ user_id: identity.user_id });
    await next();
  };
}
