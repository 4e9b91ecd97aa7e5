/**
 * `/mcp` in the OpenAPI document: one JSON-RPC endpoint whose operations are MCP's (tools/list, tools/call, tasks/…;
 * docs/mcp.md), so the document states the message's shape and the HTTP answers, not the protocol. The message schema
 * is what the SDK's transport accepts: a strict JSON-RPC 2.0 request or notification (batches are refused).
 */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errorEnvelopeSchema, jsonRequest } from './kit';
import { MCP_PATH } from '../mcp/route';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const requestId = z.union([z.string(), z.int().min(-MAX_SAFE).max(MAX_SAFE)]);

const requestMeta = z.looseObject({
  progressToken: requestId.optional(),
  'io.modelcontextprotocol/related-task': z.looseObject({ taskId: z.string() }).optional(),
});

export const mcpMessage = z
  .strictObject({
    jsonrpc: z.literal('2.0'),
    id: requestId.optional().meta({ description: 'Present on a request; a notification has none.' }),
    method: z.string().meta({ description: 'An MCP method: `initialize`, `tools/list`, `tools/call`, `tasks/get`, …' }),
    params: z.looseObject({ _meta: requestMeta.optional() }).optional(),
  })
  .meta({ id: 'McpMessage', description: 'A JSON-RPC 2.0 request or notification of the Model Context Protocol.' });

const rpcError = z.looseObject({ code: z.int(), message: z.string(), data: z.unknown().optional() });

const mcpResponse = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.int(), z.null()]),
    result: z.record(z.string(), z.unknown()).optional(),
    error: rpcError.optional(),
  })
  .meta({ id: 'McpResponse', description: 'The JSON-RPC response: `result`, or `error` (a tool error is a result).' });

const mcpError = z
  .strictObject({ jsonrpc: z.literal('2.0'), error: rpcError, id: z.null() })
  .meta({ id: 'McpError', description: 'A JSON-RPC error answered before the message reached the MCP server.' });

const rpcErrorResponse = (description: string, headers?: z.ZodObject) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: mcpError } },
});

const retryAfter = z.strictObject({ 'Retry-After': z.string().meta({ description: 'Seconds to wait.' }) });

export const mcpPaths: ZodOpenApiPathsObject = {
  [MCP_PATH]: {
    post: {
      tags: ['mcp'],
      summary: 'The MCP server (Streamable HTTP, stateless): your workflows as tools, runs as tasks',
      description:
        'JSON-RPC 2.0 over HTTP as the Model Context Protocol (2025-11-25) defines it, answered as JSON; no session ' +
        '(every request carries the API key). Each workflow is a tool, beside `list_workflows`, `start_run`, ' +
        '`get_run`, `list_approvals`, `decide_approval` and `cancel_run`; a run started with a task is the task ' +
        '(task id = run id). Details: docs/mcp.md.',
      security: BEARER,
      requestBody: jsonRequest(mcpMessage),
      responses: {
        '200': { description: 'The response to a request.', content: { 'application/json': { schema: mcpResponse } } },
        '202': { description: 'A notification, accepted (no body).' },
        '400': rpcErrorResponse('Malformed JSON, not a JSON-RPC message, a batch, or an unsupported protocol version.'),
        '401': rpcErrorResponse(
          'Missing, malformed, unknown or revoked API key.',
          z.strictObject({ 'WWW-Authenticate': z.string() }),
        ),
        '406': rpcErrorResponse('`Accept` allows neither JSON nor an event stream.'),
        '413': rpcErrorResponse('Request body over the size limit.'),
        '415': rpcErrorResponse('Request body is not JSON.'),
        '429': rpcErrorResponse('Rate limited; retry after `Retry-After` seconds.', retryAfter),
        '500': {
          description: 'Internal error (no details are leaked).',
          content: { 'application/json': { schema: z.union([mcpError, errorEnvelopeSchema]) } },
        },
        '503': {
          description: 'MongoDB unreachable while authenticating; retry after `Retry-After` seconds.',
          headers: retryAfter,
          content: { 'application/json': { schema: errorEnvelopeSchema } },
        },
      },
    },
  },
};
