/** `http_fetch`: GET a URL through the SSRF guard, with size and time limits; the body comes back as text. */
import { z } from 'zod';
import { guardedFetch } from '../net/guarded-fetch';
import { assertHostAllowed } from './egress';
import type { ToolDefinition } from './types';

/** Tool output goes back into the model's context: keep it small. */
export const HTTP_FETCH_MAX_BYTES = 256 * 1024;

const input = z.strictObject({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe('The http(s) URL to fetch'),
  max_bytes: z
    .number()
    .int()
    .min(1)
    .max(HTTP_FETCH_MAX_BYTES)
    .default(64 * 1024)
    .describe('Truncate the body after this many bytes'),
  timeout_seconds: z.number().int().min(1).max(60).default(20).describe('Time limit'),
});

const output = z.object({
  status: z.number().int(),
  url: z.string(),
  content_type: z.string().nullable(),
  body: z.string(),
  truncated: z.boolean(),
});

export const httpFetchTool = {
  name: 'http_fetch' as const,
  description:
    'Fetch a public web page or API over HTTP(S) with GET and return its status, content type and body text ' +
    '(truncated to max_bytes). Private and internal addresses are refused.',
  input,
  output,
  async execute(args, ctx) {
    const res = await guardedFetch({
      method: 'GET',
      url: args.url,
      headers: { accept: 'text/html, application/json, text/plain;q=0.9, */*;q=0.5' },
      timeoutMs: args.timeout_seconds * 1000,
      maxBytes: args.max_bytes,
      allowedHosts: ctx.config.HTTP_ALLOWED_HOSTS,
      // The step's host allowlist on every hop, before DNS: a redirect cannot lead the agent elsewhere.
      checkHop: (url, hop) => assertHostAllowed(ctx.egress, url, hop),
      signal: ctx.signal,
    });
    // A 4xx/5xx is information for the model, not a failure of the tool.
    return {
      status: res.status,
      url: res.url,
      content_type: res.headers['content-type'] ?? null,
      body: res.body.toString('utf8'),
      truncated: res.truncated,
    };
  },
} satisfies ToolDefinition<typeof input, typeof output>;
