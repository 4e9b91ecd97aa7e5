/**
 * An operator-declared stdio MCP server → JSON: its name and tool limit only. The command, its arguments and its
 * environment are the operator's (the environment may hold the server's secrets) and never leave the configuration.
 */
import { z } from 'zod';
import type { Config } from '../../config';

export const mcpStdioServerView = z
  .strictObject({
    name: z.string().meta({ description: 'What `mcp_tools` entries name: `{"stdio": "<name>"}`.' }),
    allowed_tools: z
      .array(z.string())
      .nullable()
      .meta({ description: 'The only tools of this server any agent may use (null: all).' }),
  })
  .meta({ id: 'McpStdioServer' });

export type McpStdioServerView = z.infer<typeof mcpStdioServerView>;

/** The declared servers, ordered by name. */
export function presentMcpStdioServers(declared: Config['MCP_STDIO_SERVERS']): McpStdioServerView[] {
  return Object.entries(declared)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, decl]) => ({ name, allowed_tools: decl.allowed_tools ?? null }));
}
