/** OpenAPI path of the operator's stdio MCP servers. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, ok } from './kit';
import { mcpStdioServerView } from '../presenters/mcp-stdio-server';

export const mcpStdioServersPaths: ZodOpenApiPathsObject = {
  '/api/v1/mcp-servers/stdio': {
    get: {
      tags: ['mcp-servers'],
      summary: 'The local stdio MCP servers the operator declared (select one in mcp_tools as {"stdio": name})',
      description:
        'Declared in the MCP_STDIO_SERVERS setting and launched by the worker; the same for every user, empty when ' +
        'stdio servers are off. Their commands and environments are not shown.',
      security: BEARER,
      responses: { ...ok(200, 'Every declared stdio server', z.array(mcpStdioServerView)), ...errors(401) },
    },
  },
};
