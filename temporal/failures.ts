/**
 * The one place that decides whether a failed side effect is worth retrying. Actions and tools throw the classes
 * below (or let library errors through); activities convert whatever reached them with `toApplicationFailure`.
 * Classification is by class, HTTP status and errno / SMTP codes — never by message text.
 */
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';
import { ZodError } from 'zod';
import { LlmError } from './llm/errors';

/** Stable failure codes; they become the ApplicationFailure `type` and end up in a run's step error. */
export const FAILURE_CODES = [
  // never retried: the same input will fail the same way
  'invalid_config',
  'invalid_input',
  'url_refused',
  // an agent tool call outside its step's egress policy (temporal/tools/egress.ts)
  'egress_denied',
  'http_4xx',
  'dns_not_found',
  'tls_error',
  'expression_error',
  'smtp_rejected',
  'smtp_auth',
  'not_supported',
  'budget_exceeded',
  // retried within the step's attempt budget
  'http_5xx',
  'http_429',
  'timeout',
  'network',
  'smtp_unavailable',
  'internal',
  // LLM provider calls (temporal/llm/errors.ts decides which kinds are retryable)
  'llm_not_configured',
  'llm_invalid_model',
  'llm_auth',
  'llm_bad_request',
  'llm_not_found',
  'llm_rate_limited',
  'llm_server',
  'llm_timeout',
  'llm_connection',
  'llm_invalid_response',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

export interface StepErrorOptions {
  retryable: boolean;
  /** JSON-serialisable facts for the run's error record (e.g. `{ status: 404 }`). Never secrets. */
  details?: Record<string, unknown>;
  /** Server-requested wait before the next attempt (429/503 `Retry-After`). */
  retryAfterMs?: number;
  cause?: unknown;
}

/** A classified failure of a side effect. Prefer the two subclasses; they make the intent visible at the throw. */
export class StepError extends Error {
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;
  readonly retryAfterMs?: number;

  constructor(
    readonly code: FailureCode,
    message: string,
    options: StepErrorOptions,
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StepError';
    this.retryable = options.retryable;
    this.details = options.details;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Bad input, refused URL, 4xx, permanent SMTP rejection…: retrying cannot help. */
export class NonRetryableError extends StepError {
  constructor(code: FailureCode, message: string, options: Omit<StepErrorOptions, 'retryable'> = {}) {
    super(code, message, { ...options, retryable: false });
    this.name = 'NonRetryableError';
  }
}

/** 5xx, timeouts, connection resets, SMTP 4xx…: the next attempt may succeed. */
export class RetryableError extends StepError {
  constructor(code: FailureCode, message: string, options: Omit<StepErrorOptions, 'retryable'> = {}) {
    super(code, message, { ...options, retryable: true });
    this.name = 'RetryableError';
  }
}

/** Classifies an HTTP status of a response that the caller treats as a failure. */
export function httpStatusError(status: number, message: string, retryAfterMs?: number): StepError {
  const details = { status };
  if (status === 429) return new RetryableError('http_429', message, { details, retryAfterMs });
  // 408 Request Timeout is the server saying "try again", unlike the rest of 4xx.
  if (status === 408) return new RetryableError('timeout', message, { details });
  if (status >= 500) return new RetryableError('http_5xx', message, { details, retryAfterMs });
  return new NonRetryableError('http_4xx', message, { details });
}

/** Parses a `Retry-After` header (seconds or HTTP date) into milliseconds, capped; undefined when absent or bad. */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
  capMs = 10 * 60_000,
): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), capMs);
}

// errno / library codes. Node's network errors, undici's and nodemailer's share the `code` property.
const RETRYABLE_ERRNO: Readonly<Record<string, FailureCode>> = {
  ECONNREFUSED: 'network',
  ECONNRESET: 'network',
  EPIPE: 'network',
  EHOSTUNREACH: 'network',
  ENETUNREACH: 'network',
  ENETDOWN: 'network',
  EAI_AGAIN: 'network',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  UND_ERR_SOCKET: 'network',
  // nodemailer
  ECONNECTION: 'smtp_unavailable',
  ESOCKET: 'smtp_unavailable',
  EDNS: 'smtp_unavailable',
};
const NON_RETRYABLE_ERRNO: Readonly<Record<string, FailureCode>> = {
  ENOTFOUND: 'dns_not_found',
  ERR_INVALID_URL: 'invalid_config',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls_error',
  CERT_HAS_EXPIRED: 'tls_error',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls_error',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls_error',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls_error',
  // nodemailer
  EAUTH: 'smtp_auth',
  EENVELOPE: 'smtp_rejected',
  EMESSAGE: 'smtp_rejected',
};

function codeOf(err: object): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** SMTP reply codes: 5xx permanent, 4xx transient (RFC 5321 §4.2.1). */
function smtpResponseCode(err: object): number | undefined {
  const rc = (err as { responseCode?: unknown }).responseCode;
  return typeof rc === 'number' ? rc : undefined;
}

/** Turns a StepError (or anything else) into the stable `{code, retryable}` pair, without building a failure. */
export function classify(err: unknown): {
  code: FailureCode;
  retryable: boolean;
  message: string;
  retryAfterMs?: number;
} {
  if (err instanceof StepError) {
    return { code: err.code, retryable: err.retryable, message: err.message, retryAfterMs: err.retryAfterMs };
  }
  if (err instanceof LlmError) {
    return {
      code: `llm_${err.kind}`,
      retryable: err.retryable,
      message: err.message,
      retryAfterMs: err.details.retryAfterMs,
    };
  }
  if (err instanceof ZodError) {
    const first = err.issues[0];
    const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
    return { code: 'invalid_config', retryable: false, message: `${where}${first?.message ?? 'invalid'}` };
  }
  if (typeof err === 'object' && err !== null) {
    const message = err instanceof Error ? err.message : 'unknown error';
    const rc = smtpResponseCode(err);
    if (rc !== undefined && rc >= 500) return { code: 'smtp_rejected', retryable: false, message };
    if (rc !== undefined && rc >= 400) return { code: 'smtp_unavailable', retryable: true, message };
    const code = codeOf(err);
    if (code !== undefined) {
      const nonRetryable = NON_RETRYABLE_ERRNO[code];
      if (nonRetryable) return { code: nonRetryable, retryable: false, message };
      const retryable = RETRYABLE_ERRNO[code];
      if (retryable) return { code: retryable, retryable: true, message };
    }
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      return { code: 'timeout', retryable: true, message };
    }
    // fetch wraps network errors: classify by the cause.
    if (err instanceof Error && err.cause !== undefined && err.cause !== err) {
      const inner = classify(err.cause);
      if (inner.code !== 'internal') return { ...inner, message };
    }
    return { code: 'internal', retryable: true, message };
  }
  return { code: 'internal', retryable: true, message: String(err) };
}

/**
 * The ApplicationFailure an activity throws for `err`. Already-built ApplicationFailures pass through unchanged.
 * Unknown errors stay retryable (Temporal's default): the step's bounded attempts cap the cost of a bug.
 */
export function toApplicationFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const c = classify(err);
  const details = err instanceof StepError && err.details ? [err.details] : undefined;
  return ApplicationFailure.create({
    message: c.message,
    type: c.code,
    nonRetryable: !c.retryable,
    details,
    nextRetryDelay: c.retryAfterMs,
    cause: err instanceof Error ? err : undefined,
  });
}

/**
 * What an activity should rethrow: Temporal's own failures (notably a cancellation) unchanged, everything else
 * classified by `toApplicationFailure`.
 */
export function toActivityError(err: unknown): Error {
  if (err instanceof CancelledFailure || err instanceof TemporalFailure) return err;
  return toApplicationFailure(err);
}
