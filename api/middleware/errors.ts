import '../http/state';
/**
 * First in the chain: maps every thrown error and every unrouted request to the envelope with the right status.
 * Infrastructure failures (MongoDB or Temporal unreachable) become 503; anything unexpected a bare 500.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import {
  ApiError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  BadRequestError,
} from '../http/errors';
import { respond, respondError } from '../http/envelope';
import { classifyInfraError } from '../http/infra-errors';
import { redactPath } from './request-context';

export function errorMiddleware(logger: Logger, bodyLimitBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Unrouted requests, and the 405 that the router's allowedMethods() sets without a body (any method on a known
      // path: routes/index.ts counts every method as implemented, so no 501).
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new NotFoundError(`no route for ${ctx.method} ${redactPath(ctx.path)}`);
        if (ctx.status === 405) throw new MethodNotAllowedError(ctx.response.get('Allow').split(/,\s*/));
      }
      // allowedMethods() answers OPTIONS with an Allow header and an empty body; the envelope carries the same list.
      if (ctx.method === 'OPTIONS' && ctx.status === 200 && !ctx.body) {
        respond(ctx, 200, { allow: ctx.response.get('Allow').split(/,\s*/) });
      }
    } catch (err) {
      const apiError = toApiError(err, bodyLimitBytes);
      if (apiError) {
        for (const [k, v] of Object.entries(apiError.headers)) ctx.set(k, v);
        ctx.set('X-Error-Code', apiError.code);
        respondError(ctx, apiError.status, apiError.message);
        if (apiError.status >= 500) (ctx.state.log ?? logger).warn({ err, code: apiError.code }, 'request failed');
        return;
      }
      (ctx.state.log ?? logger).error({ err }, 'unhandled error');
      ctx.set('X-Error-Code', 'internal');
      respondError(ctx, 500, 'internal server error');
    }
  };
}

/** Errors of the body parser and the router carry a `status`/`type`; map those we expect, by field, not by message. */
function toApiError(err: unknown, bodyLimitBytes: number): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const infra = classifyInfraError(err);
  if (infra) return new ServiceUnavailableError(infra);
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; type?: unknown; expose?: unknown; message?: unknown };
  if (e.status === 413 || e.type === 'entity.too.large') return new PayloadTooLargeError(bodyLimitBytes);
  // co-body rethrows JSON.parse's SyntaxError with status 400; raw-body errors carry a `type`.
  if (err instanceof SyntaxError || e.type === 'entity.parse.failed' || e.type === 'entity.verify.failed')
    return new BadRequestError('malformed JSON body', 'malformed_json');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
    return new ApiError(415, 'unsupported_media_type', 'unsupported body encoding');
  if (e.type === 'request.aborted') return new BadRequestError('request aborted');
  if (
    typeof e.status === 'number' &&
    e.status >= 400 &&
    e.status < 500 &&
    e.expose === true &&
    typeof e.message === 'string'
  ) {
    return new ApiError(e.status, 'http_error', e.message);
  }
  return undefined;
}
