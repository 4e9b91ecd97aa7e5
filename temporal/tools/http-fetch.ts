/** `http_fetch`: GET a URL through the SSRF guard, with size and time limits; the body comes back as text. */
import { guardedFetch } from '../net/guarded-fetch';
import { assertHostAllowed } from './egress';
import { httpFetchDeclaration as declaration } from '../../domain/tools/http-fetch';
import type { ToolDefinition } from './types';

export const httpFetchTool = {
  ...declaration,
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
} satisfies ToolDefinition<typeof declaration.input, typeof declaration.output>;
