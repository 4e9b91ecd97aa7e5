/**
 * `mcp_tools` of agent templates and agent steps: which of the caller's MCP servers an agent takes tools from, whole
 * or by name. The servers must exist and be the caller's: checked on write (api/commands/check-mcp-tools.ts, 400
 * naming the field).
 */
import { z } from 'zod';
import { MCP_TOOL_NAME } from './mcp-servers.schema';

const toolNames = z.array(z.string().regex(MCP_TOOL_NAME, 'an MCP tool name')).max(100);

export const mcpToolSelection = z
  .strictObject({
    server_id: z.string().min(1).max(100).meta({ description: 'One of your MCP servers (`mcp_…`).' }),
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
  })
  .meta({ id: 'McpToolSelection' });

export const mcpToolSelections = z
  .array(mcpToolSelection)
  .max(10)
  .refine((list) => new Set(list.map((s) => s.server_id)).size === list.length, 'each server at most once')
  .meta({ description: 'Agents only: tools from your MCP servers, shown to the model as `<server name>__<tool>`.' });
