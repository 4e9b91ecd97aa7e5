/**
 * Request schemas of MCP servers (db/mcp-servers.ts). The name becomes the prefix of every tool name a model sees
 * (`<name>__<tool>`), so it is short and of the characters providers accept in tool names. Credentials go in `auth`,
 * never in the URL: a URL is shown by reads, `auth` never is.
 */
import { z } from 'zod';
import { httpUrl } from '../../domain/http-url';

/** Header names a server's auth may not set: the transport owns them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'traceparent',
  'tracestate',
]);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{0,4000}$/;
export const MCP_TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

export const mcpServerName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, 'letters, digits, "_" or "-", 1–32, starting with a letter or digit')
  .meta({ description: 'Unique per user; tools are shown to models as `<name>__<tool>`.' });

export const mcpServerUrl = httpUrl('no credentials in the URL: put them in auth').meta({
  description:
    'The Streamable HTTP endpoint (http or https), e.g. `https://mcp.example.com/mcp`. Whether its address may be ' +
    'reached is decided when a run uses it (private addresses need HTTP_ALLOWED_HOSTS), not here.',
});

const headerMap = z
  .record(z.string().regex(HEADER_NAME, 'an HTTP header name'), z.string().regex(HEADER_VALUE, 'no line breaks'))
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length < 1 || names.length > 20) ctx.addIssue({ code: 'custom', message: '1 to 20 headers' });
    for (const name of names) {
      if (RESERVED_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'set by the transport, not by auth' });
      }
    }
  })
  // The count rule above, as the document states it.
  .meta({ minProperties: 1, maxProperties: 20 });

export const mcpServerAuth = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('bearer'),
      token: z.string().min(1).max(4000).regex(HEADER_VALUE, 'no line breaks'),
    }),
    z.strictObject({ type: z.literal('headers'), headers: headerMap }),
  ])
  .meta({
    description:
      'Sent with every request to the server. Stored encrypted; no read ever returns it (reads give only `auth.type`).',
  });

export const allowedTools = z
  .array(z.string().regex(MCP_TOOL_NAME, 'an MCP tool name'))
  .max(200)
  .meta({ description: 'Only these of the server’s tools may be used by any agent; absent or null: all of them.' });

export const mcpServerIdParams = z.strictObject({ id: z.string().min(1) });

export const createMcpServerBody = z.strictObject({
  name: mcpServerName,
  url: mcpServerUrl,
  auth: mcpServerAuth.optional(),
  allowed_tools: allowedTools.nullable().optional(),
});

export const updateMcpServerBody = z
  .strictObject({
    name: mcpServerName.optional(),
    url: mcpServerUrl.optional(),
    auth: mcpServerAuth
      .nullable()
      .optional()
      .meta({
        description:
          'Replaces the credentials; null removes them. Required with a `url` of another origin when the server has ' +
          'credentials (they are never sent to a new origin).',
      }),
    allowed_tools: allowedTools.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' })
  // The refinement above, as the document states it.
  .meta({ minProperties: 1 });

export type McpServerAuthInput = z.infer<typeof mcpServerAuth>;
