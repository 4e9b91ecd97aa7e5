/**
 * The `Origin` check of `/mcp`. The Streamable HTTP transport requires a server to validate `Origin`: without it a web
 * page can reach a local Stepwise through DNS rebinding (its own name, re-pointed at 127.0.0.1). A request with no
 * `Origin` (every non-browser MCP client) passes; a browser's is answered only from the API's own origin or one in
 * CORS_ORIGINS.
 *
 * "The API's own" is PUBLIC_URL's origin when it is set. Without PUBLIC_URL it is the request's own origin (protocol +
 * Host) only when that Host is an IP literal or `localhost`: under DNS rebinding the browser sends the attacker's
 * name as Host and Origin alike, so a Host *name* proves nothing — an address cannot be rebound.
 */
import { isIP } from 'node:net';
import type { Middleware } from 'koa';
import type { Config } from '../../config';
import { ForbiddenError } from '../http/errors';

export interface OriginPolicy {
  PUBLIC_URL?: string | undefined;
  CORS_ORIGINS: readonly string[];
}

/** Whether a browser at `origin` may call `/mcp`, given the request's own `protocol://host`. Pure. */
export function originAllowed(origin: string, requestOrigin: string, policy: OriginPolicy): boolean {
  if (policy.CORS_ORIGINS.includes('*') || policy.CORS_ORIGINS.includes(origin)) return true;
  if (policy.PUBLIC_URL !== undefined) return origin === new URL(policy.PUBLIC_URL).origin;
  const own = parseOrigin(requestOrigin);
  return own !== undefined && origin === own.origin && unrebindable(own.hostname);
}

function parseOrigin(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function unrebindable(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || isIP(host) !== 0;
}

/** 403 for a request whose `Origin` is present and not allowed; runs before authentication (a key does not help). */
export function checkOrigin(config: Pick<Config, 'PUBLIC_URL' | 'CORS_ORIGINS'>): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin !== '' && !originAllowed(origin, `${ctx.protocol}://${ctx.host}`, config)) {
      throw new ForbiddenError(
        `Origin ${origin} may not call /mcp: only the API's own origin (PUBLIC_URL) or one in CORS_ORIGINS`,
      );
    }
    await next();
  };
}
