/**
 * Which of an owner's definitions name an MCP server in `mcp_tools`: agent templates and workflow steps. A server
 * still named cannot be deleted (api/routes/mcp-servers.ts): every later start of those workflows would fail (422).
 */
import type { Db } from 'mongodb';
import { templatesCollection } from './templates';
import { workflowsCollection } from './workflows';

export interface McpServerUses {
  /** Names of the owner's templates whose `mcp_tools` name the server. */
  templates: string[];
  /** Names of the owner's workflows with a step whose `mcp_tools` name it. */
  workflows: string[];
}

/** At most this many names of each kind (a message lists them, not an inventory). */
const NAMES_MAX = 20;

export async function findMcpServerUses(db: Db, ownerId: string, serverId: string): Promise<McpServerUses> {
  const [templates, workflows] = await Promise.all([
    templatesCollection(db)
      .find({ owner_id: ownerId, 'mcp_tools.server_id': serverId }, { projection: { name: 1 } })
      .sort({ name: 1 })
      .limit(NAMES_MAX)
      .toArray(),
    workflowsCollection(db)
      .find({ owner_id: ownerId, 'steps.mcp_tools.server_id': serverId }, { projection: { name: 1 } })
      .sort({ name: 1 })
      .limit(NAMES_MAX)
      .toArray(),
  ]);
  return { templates: templates.map((t) => t.name), workflows: workflows.map((w) => w.name) };
}
