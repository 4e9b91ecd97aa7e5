/**
 * `http_request`: one HTTP(S) request through the SSRF guard, carrying `Idempotency-Key: <run id>:<step id>`.
 * 5xx, 408, 429, timeouts and network errors are retried; other 4xx and refused URLs are not.
 */
import { z } from 'zod';
import { httpStatusError, parseRetryAfter } from '../failures';
import { jsonValueSchema } from '../jsonata';
import type { JsonValue } from '../../domain/json';
import { guardedFetch } from '../net/guarded-fetch';
import type { ActionDefinition } from './types';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export const MAX_RESPONSE_BYTES_LIMIT = 5 * 1024 * 1024;

// Headers the client owns: framing and routing must not be set by a (possibly rendered) config value.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
  'idempotency-key',
]);

const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, 'must be a valid header name')
  .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()), 'is set by Stepwise and cannot be given');
const headerValue = z
  .string()
  .max(8192)
  .refine((v) => !/[\r\n\0]/.test(v), 'must be a single line');

const config = z.strictObject({
  method: z.enum(HTTP_METHODS).default('GET').describe('HTTP method'),
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe(
      'http(s) URL; private, loopback and link-local addresses are refused unless allowed by HTTP_ALLOWED_HOSTS',
    ),
  headers: z.record(headerName, headerValue).optional().describe('Request headers'),
  body: jsonValueSchema
    .optional()
    .describe('Request body: a string is sent as is, anything else as JSON (Content-Type application/json)'),
  timeout_seconds: z.number().int().min(1).max(300).default(30).describe('Time limit of the whole request'),
  max_response_bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_RESPONSE_BYTES_LIMIT)
    .default(1024 * 1024)
    .describe('Longer bodies are truncated (output.truncated = true)'),
});

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

const output = z.object({
  status: z.number().int(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  /** Parsed JSON when the response is JSON and complete, else the text (possibly truncated), null when empty. */
  body: jsonValueSchema,
  truncated: z.boolean(),
  bytes: z.number().int(),
});
export type HttpRequestOutput = z.infer<typeof output>;

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
  name: 'http_request',
  description:
    'Make an HTTP(S) request (method, url, headers, body, timeout). Sends Idempotency-Key: <run id>:<step id>. ' +
    'Output: status, selected headers, parsed JSON or text body (truncated with a flag). 5xx and timeouts are ' +
    'retried; 4xx and refused URLs fail the step.',
  config,
  refine(cfg, ctx) {
    if ((cfg.method === 'GET' || cfg.method === 'HEAD') && cfg.body !== undefined) {
      ctx.addIssue({ code: 'custom', message: `a ${cfg.method} request has no body`, path: ['body'] });
    }
  },
  output,
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
} satisfies ActionDefinition<'http_request', typeof config, typeof output>;
