/** OpenAPI paths of MCP servers. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { mcpServerView } from '../presenters/mcp-server';
import { pageQuery } from '../http/pagination';
import { createMcpServerBody, mcpServerIdParams, updateMcpServerBody } from '../schemas/mcp-servers';

const tags = ['mcp-servers'];

export const mcpServersPaths: ZodOpenApiPathsObject = {
  '/api/v1/mcp-servers': {
    get: {
      tags,
      summary: 'Your MCP servers',
      security: BEARER,
      requestParams: { query: pageQuery },
      responses: {
        ...ok(200, 'One page of MCP servers', z.array(mcpServerView), { paged: true }),
        ...errors(400, 401),
      },
    },
    post: {
      tags,
      summary: 'Register an MCP server (Streamable HTTP) whose tools agents may use',
      description:
        'The credentials in `auth` are stored encrypted with the payload codec’s keys and never returned. ' +
        '409: you already have a server of that name, or MCP_SERVERS_MAX_PER_USER servers.',
      security: BEARER,
      requestBody: jsonRequest(createMcpServerBody),
      responses: { ...ok(201, 'The new server', mcpServerView), ...errors(400, 401, 409, 413, 415) },
    },
  },
  '/api/v1/mcp-servers/{id}': {
    get: {
      tags,
      summary: 'One MCP server',
      security: BEARER,
      requestParams: { path: mcpServerIdParams },
      responses: { ...ok(200, 'The server', mcpServerView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Rename an MCP server, move it, replace or remove its credentials, or change its allowed tools',
      description:
        'Runs already started keep the URL and tool selection they started with; credentials are sent only to the ' +
        'origin (scheme, host, port) they were given for, so a run started before a move gets no credentials. ' +
        'A `url` of another origin needs `auth` in the same request (new credentials, or null to drop them): without ' +
        'it, a server that has credentials answers 400 `auth_required`. 409: the name is taken.',
      security: BEARER,
      requestParams: { path: mcpServerIdParams },
      requestBody: jsonRequest(updateMcpServerBody),
      responses: { ...ok(200, 'The server', mcpServerView), ...errors(400, 401, 404, 409, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete an MCP server no template or workflow names',
      description:
        '409 `mcp_server_in_use`, naming them, while the `mcp_tools` of any of your templates or workflow steps ' +
        'name the server: remove it from them first. Runs already started that use it get no tools of it (a ' +
        'listing problem) and error results for its calls.',
      security: BEARER,
      requestParams: { path: mcpServerIdParams },
      responses: {
        ...ok(200, 'Deleted', z.strictObject({ id: z.string(), deleted: z.literal(true) })),
        ...errors(401, 404, 409),
      },
    },
  },
};
