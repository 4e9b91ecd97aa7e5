/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests. Each resource contributes a
 * paths object from its file in this folder (`api/openapi/<resource>.ts`); to add a resource, export its paths object there and
 * add ONE line to `PATH_GROUPS` below. Served at GET /api/v1/openapi.json, rendered at /docs.
 */
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import type { oas31 } from 'zod-openapi';
import type { Config } from '../../config';
import { COMMON_API_ERRORS, errorResponse } from './kit';
import { agentsPaths } from './agents';
import { metaPaths } from './meta';
import { workflowsPaths } from './workflows';
import { transcriptPaths } from './transcripts';
import { runEventPaths } from './run-events';
import { approvalPaths } from './approvals';
import { runsPaths } from './runs';
import { hooksPaths } from './hooks';
import { schedulesPaths } from './schedules';
import { webhooksPaths } from './webhooks';
import { mcpPaths } from './mcp';
import { mcpServersPaths } from './mcp-servers';
import { mcpStdioServersPaths } from './mcp-stdio-servers';
import { usagePaths } from './usage';
import { datasetsPaths } from './datasets';
import { threadsPaths } from './threads';
import { experimentsPaths } from './experiments';
import { runEventView } from '../presenters/run-event';

/** Every resource's paths; one line per resource router. */
const PATH_GROUPS: ZodOpenApiPathsObject[] = [
  // health, metrics, this document
  metaPaths,
  // /api/v1/agents
  agentsPaths,
  // /api/v1/workflows and their runs
  workflowsPaths,
  // /api/v1/workflows/runs/{runId}/steps/{stepId}/transcript
  transcriptPaths,
  // /api/v1/workflows/runs/{runId}/events
  runEventPaths,
  // /api/v1/approvals
  approvalPaths,
  // /api/v1/runs
  runsPaths,
  // /api/v1/workflows/{id}/hooks, /api/v1/hooks/{hookId}
  hooksPaths,
  // /api/v1/workflows/{id}/schedules, /api/v1/schedules/{scheduleId}[/pause|resume|trigger|backfill]
  schedulesPaths,
  // /api/v1/webhooks/secret
  webhooksPaths,
  // /mcp (JSON-RPC: the MCP server)
  mcpPaths,
  // /api/v1/mcp-servers[/{id}]
  mcpServersPaths,
  // /api/v1/mcp-servers/stdio
  mcpStdioServersPaths,
  // /api/v1/usage
  usagePaths,
  // /api/v1/datasets[/{id}[/versions|/items[/from-runs|/import|/export|/{itemId}]]]
  datasetsPaths,
  // /api/v1/threads[/{id}[/messages|events|fork|turns/{turn}/cancel]]
  threadsPaths,
  // /api/v1/experiments[/{id}[/cancel|/results|/compare]]
  experimentsPaths,
  // add one line per resource (workflows, runs) above this comment
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Builds the document (call once per app; it is a pure function of the schemas and the public URL). */
export function buildOpenApiDocument(config: Pick<Config, 'PUBLIC_URL'>): oas31.OpenAPIObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const group of PATH_GROUPS) {
    for (const [path, item] of Object.entries(group)) {
      if (paths[path]) throw new Error(`OpenAPI: path ${path} is declared twice`);
      paths[path] = path.startsWith('/api/v1/') ? withCommonErrors(item) : item;
    }
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Stepwise API',
      version: '1.0.0',
      description:
        'Agent templates and workflows run durably on Temporal. Every response body is `{data, error}`; ' +
        'authenticate with `Authorization: Bearer <api key>`. The same key also opens `/mcp`, an MCP server ' +
        '(Streamable HTTP, JSON-RPC, not part of this document): each workflow is a tool, and a run started there is ' +
        'a task (docs/mcp.md).',
    },
    ...(config.PUBLIC_URL ? { servers: [{ url: config.PUBLIC_URL }] } : {}),
    components: {
      // The event stream's items carry a RunEvent as text (./run-events.ts); clients type events with it.
      schemas: { RunEvent: runEventView },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key created with the CLI (`sw_…`).' },
      },
    },
    paths,
  });
}

/** Rate limiting and infrastructure failures can answer any API operation. */
function withCommonErrors(item: ZodOpenApiPathsObject[string]): ZodOpenApiPathsObject[string] {
  const out = { ...item };
  for (const method of METHODS) {
    const op: ZodOpenApiOperationObject | undefined = out[method];
    if (!op) continue;
    const responses = { ...op.responses };
    for (const status of COMMON_API_ERRORS) responses[`${status}`] ??= errorResponse(status);
    out[method] = { ...op, responses };
  }
  return out;
}
