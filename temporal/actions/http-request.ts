/**
 * `http_request`: one HTTP(S) request through the SSRF guard, carrying `Idempotency-Key: <run id>:<step id>`.
 * 5xx, 408, 429, timeouts and network errors are retried; other 4xx and refused URLs are not.
 */
import { httpRequestDeclaration } from '../../domain/actions/http-request';
import type { JsonValue } from '../../domain/json';
import { httpStatusError, parseRetryAfter } from '../failures';
import { guardedFetch } from '../net/guarded-fetch';
import type { ActionDefinition } from './types';

/** Response headers copied into the output; others are dropped (cookies, tracing noise). */
export const SELECTED_RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'location',
  'etag',
  'last-modified',
  'cache-control',
  'retry-after',
  'date',
  'x-request-id',
] as const;

function encodeBody(body: JsonValue | undefined, headers: Record<string, string>): string | undefined {
  if (body === undefined) return undefined;
  const hasType = Object.keys(headers).some((k) => k.toLowerCase() === 'content-type');
  if (typeof body === 'string') {
    if (!hasType) headers['content-type'] = 'text/plain; charset=utf-8';
    return body;
  }
  if (!hasType) headers['content-type'] = 'application/json';
  return JSON.stringify(body);
}

function decodeBody(bytes: Buffer, contentType: string | undefined, truncated: boolean): JsonValue {
  if (bytes.length === 0) return null;
  const text = bytes.toString('utf8');
  if (!truncated && contentType !== undefined && /[/+]json\b/i.test(contentType)) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return text;
}

export const httpRequestAction = {
  ...httpRequestDeclaration,
  async execute(cfg, ctx) {
    const headers: Record<string, string> = { ...cfg.headers, 'idempotency-key': ctx.idempotencyKey };
    const body = encodeBody(cfg.body, headers);
    const res = await guardedFetch({
      method: cfg.method,
      url: cfg.url,
      headers,
      body,
      timeoutMs: cfg.timeout_seconds * 1000,
      maxBytes: cfg.max_response_bytes,
      allowedHosts: ctx.config.HTTP_ALLOWED_HOSTS,
      signal: ctx.signal,
    });
    if (res.status >= 400) {
      throw httpStatusError(
        res.status,
        `${cfg.method} ${res.url} answered ${res.status}`,
        parseRetryAfter(res.headers['retry-after']),
      );
    }
    const selected: Record<string, string> = {};
    for (const name of SELECTED_RESPONSE_HEADERS) {
      const value = res.headers[name];
      if (value !== undefined) selected[name] = value;
    }
    return {
      status: res.status,
      url: res.url,
      headers: selected,
      body: decodeBody(res.body, res.headers['content-type'], res.truncated),
      truncated: res.truncated,
      bytes: res.body.length,
    };
  },
} satisfies ActionDefinition<
  'http_request',
  typeof httpRequestDeclaration.config,
  typeof httpRequestDeclaration.output
>;
