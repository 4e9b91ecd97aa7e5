/**
 * Every error the API answers with has a class, an HTTP status and a stable code. The error middleware turns
 * them into the envelope; anything else becomes a 500 whose message never leaks internals.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, code = 'invalid_request') {
    super(400, code, message);
  }
}
export class UnauthorizedError extends ApiError {
  constructor(message = 'missing or invalid API key: send Authorization: Bearer <key>') {
    super(401, 'unauthorized', message, { 'WWW-Authenticate': 'Bearer' });
  }
}
export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}
export class NotFoundError extends ApiError {
  constructor(message = 'not found') {
    super(404, 'not_found', message);
  }
}
export class MethodNotAllowedError extends ApiError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', `method not allowed; allowed: ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    });
  }
}
export class ConflictError extends ApiError {
  constructor(message: string, code = 'conflict') {
    super(409, code, message);
  }
}
export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `request body exceeds the limit of ${Math.round(limitBytes / 1024)} KiB`);
  }
}
export class UnsupportedMediaTypeError extends ApiError {
  constructor() {
    super(415, 'unsupported_media_type', 'request body must be JSON (Content-Type: application/json)');
  }
}
export class UnprocessableError extends ApiError {
  constructor(message: string, code = 'unprocessable') {
    super(422, code, message);
  }
}
export class TooManyRequestsError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', `too many requests; retry after ${retryAfterSeconds} s`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}
/** EVENTS_MAX_STREAMS (per process) or EVENTS_MAX_STREAMS_PER_USER open event streams. */
export class TooManyStreamsError extends ApiError {
  constructor(message: string) {
    super(429, 'too_many_streams', message, { 'Retry-After': '5' });
  }
}
/** A user already has USER_MAX_CONCURRENT_RUNS runs that have not ended. */
export class ConcurrentRunsExceededError extends ApiError {
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      429,
      'concurrent_runs_exceeded',
      `you already have ${limit} runs that have not ended (the limit); start again when one has ended`,
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}
export class ServiceUnavailableError extends ApiError {
  constructor(what: string) {
    super(503, 'unavailable', `${what} is unreachable; try again shortly`, { 'Retry-After': '5' });
  }
}
