/**
 * A server's `tools/list` answer → the tools a model is shown: only what the selection and the server's own
 * `allowed_tools` let through, namespaced `<server>__<tool>`, with bounded descriptions and schemas, and the retry
 * class and destructive refusal read from the tools' annotations (decision 0401). The bounds keep a step's tool list
 * from flooding the model's context and the workflow's history.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import { isSelected, mcpToolName, type McpServerSelection, type McpToolDefinition } from '../../domain/mcp';

export const MCP_TOOLS_PER_STEP_MAX = 32;
export const MCP_DESCRIPTION_MAX_CHARS = 1024;
export const MCP_SCHEMA_MAX_BYTES = 8 * 1024;

/** Adds `server`'s selected tools to `into` (names already taken are refused); returns what was left out and why. */
export function selectTools(server: McpServerSelection, tools: readonly Tool[], into: McpToolDefinition[]): string[] {
  const problems: string[] = [];
  for (const tool of tools) {
    if (!isSelected(server, tool.name)) continue;
    const name = mcpToolName(server.server_name, tool.name);
    const schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema), 'utf8');
    if (schemaBytes > MCP_SCHEMA_MAX_BYTES) {
      problems.push(`${name}: input schema of ${schemaBytes} bytes (max ${MCP_SCHEMA_MAX_BYTES}); not shown`);
      continue;
    }
    if (into.some((t) => t.name === name)) {
      problems.push(`${name}: the name is taken by another tool once shortened; not shown`);
      continue;
    }
    if (into.length >= MCP_TOOLS_PER_STEP_MAX) {
      problems.push(`${name}: a step shows at most ${MCP_TOOLS_PER_STEP_MAX} MCP tools; not shown`);
      continue;
    }
    const a = tool.annotations ?? {};
    const description = (tool.description ?? tool.title ?? a.title ?? '').slice(0, MCP_DESCRIPTION_MAX_CHARS);
    into.push({
      name,
      server_id: server.server_id,
      tool: tool.name,
      retry: a.readOnlyHint === true || a.idempotentHint === true ? 'retry' : 'once',
      // The protocol's default for destructiveHint is true, but only for tools that are not read-only; a tool with no
      // annotations at all is treated as not destructive (most servers annotate nothing), and attempted once. The
      // user's own mark (require_approval) outranks allow_destructive: asking is the safer reading of both lists.
      refused:
        (server.require_approval ?? []).includes(tool.name) ||
        (a.destructiveHint === true && !(server.allow_destructive ?? []).includes(tool.name)),
      description: `[MCP ${server.server_name}] ${description}`,
      input_schema: tool.inputSchema as JsonObject,
    });
  }
  return problems;
}
