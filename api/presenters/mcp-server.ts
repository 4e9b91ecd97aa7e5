/** MCP server → JSON. Credentials never leave: a read says only which kind of auth is set. */
import { z } from 'zod';
import type { McpServerDoc } from '../../db/mcp-servers';
import { iso, isoTimestamp } from './common';

export const mcpServerView = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    auth: z.strictObject({
      type: z.enum(['none', 'bearer', 'headers']).meta({ description: 'Which credentials are stored (never shown).' }),
    }),
    allowed_tools: z.array(z.string()).nullable(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'McpServer' });

export type McpServerView = z.infer<typeof mcpServerView>;

export function presentMcpServer(doc: McpServerDoc): McpServerView {
  return {
    id: doc._id,
    name: doc.name,
    url: doc.url,
    auth: { type: doc.auth_type },
    allowed_tools: doc.allowed_tools,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}
