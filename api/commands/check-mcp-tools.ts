/**
 * Write-time check of `mcp_tools` (agent templates and agent steps): every server named is one of the caller's own,
 * or a stdio server the operator declared in MCP_STDIO_SERVERS (decision 0420; the API reads the same setting as the
 * worker that launches them). Another user's server reads as unknown, as everywhere. Whether the named tools exist is not checked here (the
 * server is not contacted on write): a tool that is not listed when the step runs is simply not shown to the model.
 */
import type { Db } from 'mongodb';
import { isId } from '../../db/ids';
import { findOwnMcpServers } from '../../db/mcp-servers';
import type { McpToolSelection } from '../../domain/mcp';

export interface SelectionsAt {
  /** The field, for messages: `mcp_tools`, `steps[0] (ask).mcp_tools`. */
  where: string;
  selections: readonly McpToolSelection[] | undefined;
}

/** Problems naming the field (`mcp_tools[0].server_id: unknown MCP server "mcp_…"`); empty when all are known. */
export async function mcpToolProblems(
  db: Db,
  ownerId: string,
  fields: readonly SelectionsAt[],
  stdioNames: readonly string[],
): Promise<string[]> {
  const ids = fields
    .flatMap((f) => (f.selections ?? []).map((s) => s.server_id))
    .filter((id): id is string => id !== undefined && isId('mcp', id));
  const own = new Set((await findOwnMcpServers(db, ownerId, ids)).map((s) => s._id));
  const problems: string[] = [];
  for (const { where, selections } of fields) {
    for (const [i, sel] of (selections ?? []).entries()) {
      if (sel.stdio !== undefined) {
        if (!stdioNames.includes(sel.stdio))
          problems.push(`${where}[${i}].stdio: ${unknownStdio(sel.stdio, stdioNames)}`);
      } else if (!own.has(sel.server_id)) {
        problems.push(`${where}[${i}].server_id: unknown MCP server "${sel.server_id}" (see GET /api/v1/mcp-servers)`);
      }
    }
  }
  return problems;
}

function unknownStdio(name: string, declared: readonly string[]): string {
  if (declared.length === 0) {
    return `unknown stdio MCP server "${name}": stdio servers are off (the operator declares them in MCP_STDIO_SERVERS)`;
  }
  return `unknown stdio MCP server "${name}" (declared: ${[...declared].sort().join(', ')}; see GET /api/v1/mcp-servers/stdio)`;
}
