import '../http/state';
/**
 * Gives every request an id (echoed as X-Request-Id) and a child logger, and logs one line when it ends. The child is
 * made on first use: most requests never log anything but that line, which the base logger writes with the same
 * fields (a pino child per request is a visible part of a simple read's CPU; docs/benchmarks.md, row B7).
 */
import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The codec endpoint's path carries its access token (/codec/<token>/decode): logs get the path without it. */
const CODEC_TOKEN_PATH = /^\/codec\/[^/]+\/(?=[^/]+$)/;

export function redactPath(path: string): string {
  return path.replace(CODEC_TOKEN_PATH, '/codec/[redacted]/');
}

export function requestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', requestId);
    ctx.state.requestId = requestId;
    const bindings: Record<string, unknown> = { request_id: requestId };
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (child ??= logger.child(bindings)),
      // A handler may still replace it (as before, when it was a plain property).
      set: (replacement: Logger) => {
        child = replacement;
      },
      enumerable: true,
      configurable: true,
    });
    ctx.state.bindLog = (fields) => {
      if (child) child = child.child(fields);
      else Object.assign(bindings, fields);
    };
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // Checked first: the line's fields are not even built when the level leaves it out.
      if ((child ?? logger).isLevelEnabled('info')) logRequest(child ?? logger, started, ctx, child ? {} : bindings);
    }
  };
}

/** The request's one log line; `extra`: without a child logger, the fields it would carry. */
function logRequest(log: Logger, started: bigint, ctx: Context, extra: Record<string, unknown>): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  log.info(
    {
      method: ctx.method,
      path: redactPath(ctx.path),
      status: ctx.status,
      ms: Math.round(ms * 10) / 10,
      user_id: ctx.state.user?.id,
      ...extra,
    },
    'request',
  );
}
