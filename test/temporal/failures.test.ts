/** toApplicationFailure: classification by class, HTTP status and errno/SMTP codes — never by message text. */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import {
  NonRetryableError,
  RetryableError,
  httpStatusError,
  parseRetryAfter,
  toActivityError,
  toApplicationFailure,
} from '../../temporal/failures';

const withCode = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`failure ${code}`), { code, ...extra });

describe('toApplicationFailure', () => {
  it.each([
    ['NonRetryableError', new NonRetryableError('url_refused', 'refused'), 'url_refused', true],
    ['RetryableError', new RetryableError('http_5xx', 'boom'), 'http_5xx', false],
    ['ZodError', z.object({ a: z.string() }).safeParse({}).error, 'invalid_config', true],
    ['ECONNREFUSED', withCode('ECONNREFUSED'), 'network', false],
    ['ECONNRESET', withCode('ECONNRESET'), 'network', false],
    ['ETIMEDOUT', withCode('ETIMEDOUT'), 'timeout', false],
    ['EAI_AGAIN', withCode('EAI_AGAIN'), 'network', false],
    ['ENOTFOUND', withCode('ENOTFOUND'), 'dns_not_found', true],
    ['TLS certificate', withCode('CERT_HAS_EXPIRED'), 'tls_error', true],
    ['nodemailer EAUTH', withCode('EAUTH'), 'smtp_auth', true],
    ['nodemailer ECONNECTION', withCode('ECONNECTION'), 'smtp_unavailable', false],
    ['SMTP 550', withCode('EENVELOPE', { responseCode: 550 }), 'smtp_rejected', true],
    ['SMTP 421', withCode('EENVELOPE', { responseCode: 421 }), 'smtp_unavailable', false],
    ['fetch wrapping a reset', new TypeError('fetch failed', { cause: withCode('ECONNRESET') }), 'network', false],
    ['TimeoutError', Object.assign(new Error('t'), { name: 'TimeoutError' }), 'timeout', false],
    ['an unknown bug', new TypeError('x is undefined'), 'internal', false],
    ['a thrown string', 'oops', 'internal', false],
  ])('%s is classified', (_label, err, type, nonRetryable) => {
    const failure = toApplicationFailure(err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(nonRetryable);
  });

  it('does not classify by message text', () => {
    const failure = toApplicationFailure(new Error('connect ECONNREFUSED 127.0.0.1:80 (HTTP 404, invalid)'));
    expect(failure).toMatchObject({ type: 'internal', nonRetryable: false });
  });

  it('keeps details and the server-requested retry delay', () => {
    const failure = toApplicationFailure(httpStatusError(429, 'slow down', 5000));
    expect(failure).toMatchObject({
      type: 'http_429',
      nonRetryable: false,
      nextRetryDelay: 5000,
      details: [{ status: 429 }],
    });
    expect(failure.message).toBe('slow down');
  });

  it('names the field of a ZodError in the message', () => {
    const zodError = z.object({ url: z.string() }).safeParse({ url: 1 }).error;
    expect(toApplicationFailure(zodError).message).toMatch(/^url: /);
  });

  it('passes an existing ApplicationFailure through unchanged', () => {
    const original = ApplicationFailure.nonRetryable('already classified', 'custom');
    expect(toApplicationFailure(original)).toBe(original);
  });

  it('toActivityError lets a cancellation through untouched', () => {
    const cancelled = new CancelledFailure('cancelled');
    expect(toActivityError(cancelled)).toBe(cancelled);
    expect(toActivityError(new NonRetryableError('http_4xx', 'no'))).toBeInstanceOf(ApplicationFailure);
  });
});

describe('httpStatusError', () => {
  it.each([
    [400, 'http_4xx', false],
    [403, 'http_4xx', false],
    [404, 'http_4xx', false],
    [408, 'timeout', true],
    [429, 'http_429', true],
    [500, 'http_5xx', true],
    [504, 'http_5xx', true],
  ])('%i → %s (retryable: %s)', (status, code, retryable) => {
    const err = httpStatusError(status, 'x');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(retryable);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['5', 5000],
    ['0', 0],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['999999', 600_000],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%p → %p ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
