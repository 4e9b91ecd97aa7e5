/**
 * `mcp_tools` of agent templates and agent steps: which of the caller's MCP servers an agent takes tools from, whole
 * or by name: one of the caller's servers (`server_id`) or a stdio server the operator declared (`stdio`). Both are
 * checked on write (api/commands/check-mcp-tools.ts, 400 naming the field).
 */
import { z } from 'zod';
import { MCP_TOOL_NAME } from './mcp-servers';

const toolNames = z.array(z.string().regex(MCP_TOOL_NAME, 'an MCP tool name')).max(100);

const filters = {
  include: toolNames.optional().meta({ description: 'Only these of its tools (absent: all of them).' }),
  exclude: toolNames.optional().meta({ description: 'Never these of its tools.' }),
  allow_destructive: toolNames.optional().meta({
    description:
      'Tools annotated `destructiveHint` that the agent may call without asking; every other destructive tool ' +
      'waits for your decision in the approvals inbox before each call.',
  }),
  require_approval: toolNames.optional().meta({
    description:
      'Tools you mark destructive: each call waits for your decision in the approvals inbox (also when listed in ' +
      '`allow_destructive` or not annotated).',
  }),
};

export const mcpToolSelection = z
  .union(
    [
      z.strictObject({
        server_id: z.string().min(1).max(100).meta({ description: 'One of your MCP servers (`mcp_…`).' }),
        ...filters,
      }),
      z.strictObject({
        stdio: z.string().min(1).max(32).meta({
          description: 'A local stdio MCP server the operator declared (GET /api/v1/mcp-servers/stdio), by name.',
        }),
        ...filters,
      }),
    ],
    {
      error:
        'either {server_id} (one of your MCP servers) or {stdio} (a stdio server the operator declared), with ' +
        'optional include, exclude, allow_destructive and require_approval lists of tool names',
    },
  )
  .meta({ id: 'McpToolSelection' });

export const mcpToolSelections = z
  .array(mcpToolSelection)
  .max(10)
  .refine(
    (list) => new Set(list.map((s) => ('stdio' in s ? `stdio:${s.stdio}` : s.server_id))).size === list.length,
    'each server at most once',
  )
  .meta({ description: 'Agents only: tools from your MCP servers, shown to the model as `<server name>__<tool>`.' });
