/**
 * Write-time check of `mcp_tools` (agent templates and agent steps): every server named is one of the caller's own.
 * Another user's server reads as unknown, as everywhere. Whether the named tools exist is not checked here (the
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

/** Problems naming the field (`mcp_tools[0].server_id: unknown MCP server "mcp_…"`); empty when all are the caller's. */
export async function mcpToolProblems(db: Db, ownerId: string, fields: readonly SelectionsAt[]): Promise<string[]> {
  const ids = fields.flatMap((f) => (f.selections ?? []).map((s) => s.server_id)).filter((id) => isId('mcp', id));
  const own = new Set((await findOwnMcpServers(db, ownerId, ids)).map((s) => s._id));
  const problems: string[] = [];
  for (const { where, selections } of fields) {
    for (const [i, sel] of (selections ?? []).entries()) {
      if (!own.has(sel.server_id)) {
        problems.push(`${where}[${i}].server_id: unknown MCP server "${sel.server_id}" (see GET /api/v1/mcp-servers)`);
      }
    }
  }
  return problems;
}
