/** `http_fetch`: GET a URL through the SSRF guard, with size and time limits; the body comes back as text. */
import { z } from 'zod';
import { httpUrl } from '../http-url';
import type { ToolDeclaration } from './types';

/** Tool output goes back into the model's context: keep it small. */
export const HTTP_FETCH_MAX_BYTES = 256 * 1024;

export const httpFetchDeclaration = {
  name: 'http_fetch' as const,
  description:
    'Fetch a public web page or API over HTTP(S) with GET and return its status, content type and body text ' +
    '(truncated to max_bytes). Private and internal addresses are refused.',
  input: z.strictObject({
    url: httpUrl().describe('The http(s) URL to fetch'),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(HTTP_FETCH_MAX_BYTES)
      .default(64 * 1024)
      .describe('Truncate the body after this many bytes'),
    timeout_seconds: z.number().int().min(1).max(60).default(20).describe('Time limit'),
  }),
  output: z.object({
    status: z.number().int(),
    url: z.string(),
    content_type: z.string().nullable(),
    body: z.string(),
    truncated: z.boolean(),
  }),
} satisfies ToolDeclaration;
