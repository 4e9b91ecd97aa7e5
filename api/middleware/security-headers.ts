/**
 * Browser-facing hardening of every response: security headers (helmet) with a Content Security Policy that still
 * lets the API docs page (/docs: Swagger UI's own script and style files, no CDN) work, and CORS, off unless
 * CORS_ORIGINS names the origins allowed to call the API from a browser.
 */
import cors from '@koa/cors';
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';
import type { Config } from '../../config';

/**
 * Every response's security headers. They do not depend on the request, so helmet is asked once, at startup, which
 * headers it sets (and removes), and each response gets that list: the same headers without helmet's per-request
 * chain of middleware and promises, a measurable share of a small read's cost (docs/benchmarks.md, row B7).
 */
export function securityHeaders(): Middleware {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const res = {
    setHeader: (name: string, value: string | number | readonly string[]) => set.push([name, String(value)]),
    removeHeader: (name: string) => removed.push(name),
  };
  // helmet writes its headers synchronously, before its promise settles.
  void helmetMiddleware()({ req: {}, res } as unknown as Parameters<Middleware>[0], () => Promise.resolve());
  if (set.length === 0) throw new Error('helmet set no headers: security-headers.ts needs updating for this version');
  return async (ctx, next) => {
    for (const [name, value] of set) ctx.res.setHeader(name, value);
    for (const name of removed) ctx.res.removeHeader(name);
    await next();
  };
}

function helmetMiddleware(): Middleware {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        // /docs loads its scripts from this origin only (the init script is a file, not inline).
        scriptSrc: ["'self'"],
        // Swagger UI sets style attributes on its elements.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        // The docs page fetches /api/v1/openapi.json and tries requests against the API itself.
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    // The API is consumed cross-origin when CORS allows it; helmet's same-origin default would block that.
    crossOriginResourcePolicy: { policy: 'same-site' },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
  });
}

/** CORS for the origins in CORS_ORIGINS (`*` for any); none configured → no CORS headers at all (same-origin only). */
export function corsPolicy(config: Pick<Config, 'CORS_ORIGINS'>): Middleware | undefined {
  const origins = config.CORS_ORIGINS;
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  return cors({
    // Returning '' leaves the header out: the browser refuses the response, the server still answers as usual.
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return any ? '*' : origins.includes(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID'],
    exposeHeaders: ['Link', 'Retry-After', 'X-Request-Id', 'X-Error-Code', 'Location'],
    // API keys travel in the Authorization header, never in cookies.
    credentials: false,
    maxAge: 600,
  });
}
