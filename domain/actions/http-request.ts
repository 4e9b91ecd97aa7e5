/**
 * `http_request`'s config and output (the request itself is temporal/actions/http-request.ts). Reserved headers and
 * the URL's scheme are refused here, at write time and again on the rendered config.
 */
import { z } from 'zod';
import { httpUrl } from '../http-url';
import { jsonValueSchema } from '../json-value';
import type { ActionDeclaration } from './types';

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
  url: httpUrl().describe(
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

const output = z.object({
  status: z.number().int(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  /** Parsed JSON when the response is JSON and complete, else the text (possibly truncated), null when empty. */
  body: jsonValueSchema,
  truncated: z.boolean(),
  bytes: z.number().int(),
});

export const httpRequestDeclaration = {
  name: 'http_request',
  effect: 'side_effect',
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
  template: {
    name: 'HTTP request',
    short_description: 'Calls an HTTP(S) endpoint (webhook, REST API).',
    default_prompt: 'Make an HTTP request. Set method, url, headers and body in the step config.',
    tags: ['http', 'integration'],
    // No method: the action's own default (GET) is the one the API documents.
    config: { url: '{{input.url}}', timeout_seconds: 30 },
  },
} satisfies ActionDeclaration<'http_request', typeof config, typeof output>;
