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
    const user = await authenticateKey(db, match[1]);
    if (!user) throw new UnauthorizedError('invalid or revoked API key');
    ctx.state.user = { id: user._id, name: user.name };
    ctx.state.log = ctx.state.log.child({ user_id: user._id });
    await next();
  };
}
