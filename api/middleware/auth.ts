/** Deny by default: every route behind this middleware needs `Authorization: Bearer <api key>`. */
import type { Middleware } from 'koa';
import type { Db } from 'mongodb';
import { authenticateKey } from '../../db/users';
import { UnauthorizedError } from '../errors';
import '../state';

export function requireUser(db: Db): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const match = /^Bearer ([^\s]+)$/i.exec(header);
    if (!match?.[1]) throw new UnauthorizedError();
    const identity = await authenticateKey(db, match[1]);
    if (!identity) throw new UnauthorizedError('invalid or revoked API key');
    ctx.state.user = { id: identity.user_id, keyId: identity.key_id };
    ctx.state.log = ctx.state.log.child({ user_id: identity.user_id });
    await next();
  };
}
