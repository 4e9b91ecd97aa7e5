/**
 * The templates and sub-workflows a run of a workflow uses, as they are now — read when the run starts, by the API
 * (`POST /api/v1/workflows/:id/run`, hooks) and by the worker (scheduled runs). The definition was checked on write; since then a template
 * or a called workflow may have been deleted, or a called workflow changed so that the tree now has a cycle or nests
 * too deep: each is a problem naming the step, which the caller turns into its own kind of refusal.
 */
import type { Db } from 'mongodb';
import { findOwnMcpServers, type McpServerDoc } from '../../db/mcp-servers';
import { findVisibleTemplates, type TemplateDoc } from '../../db/templates';
import type { WorkflowDoc } from '../../db/workflows';
import type { SnapshotSources } from './snapshot';
import { loadWorkflowTree } from './sub-workflows';

export type LoadedSources = { ok: true; sources: SnapshotSources } | { ok: false; problem: string };

export async function loadSnapshotSources(
  db: Db,
  ownerId: string,
  workflow: WorkflowDoc,
  maxDepth: number,
  /** Templates read with the workflow (db/workflow-with-templates.ts): only the others are read here. */
  known: ReadonlyMap<string, TemplateDoc> = new Map(),
): Promise<LoadedSources> {
  const tree = await loadWorkflowTree(db, ownerId, { id: workflow._id, steps: workflow.steps }, maxDepth);
  if (tree.problems.length > 0) {
    return { ok: false, problem: `the workflow can no longer run: ${tree.problems.join('; ')}` };
  }
  const all = [workflow, ...tree.workflows.values()];
  const ids = [...new Set(all.flatMap((wf) => wf.steps.flatMap((s) => (s.template_id ? [s.template_id] : []))))];
  const unknown = ids.filter((id) => !known.has(id));
  const templates = new Map(known);
  if (unknown.length > 0) for (const [id, t] of await findVisibleTemplates(db, ownerId, unknown)) templates.set(id, t);
  for (const wf of all) {
    const missing = wf.steps.find((s) => s.template_id !== undefined && !templates.has(s.template_id));
    if (missing) {
      const where = wf === workflow ? '' : ` of sub-workflow "${wf.name}"`;
      return {
        ok: false,
        problem: `the workflow can no longer run: step "${missing.id}"${where} uses template ${missing.template_id}, which no longer exists`,
      };
    }
  }
  const mcp = await loadMcpServers(db, ownerId, all, templates);
  if (!mcp.ok) return mcp;
  const sources: SnapshotSources = { templates, workflows: tree.workflows };
  if (mcp.servers.size > 0) sources.mcpServers = mcp.servers;
  return { ok: true, sources };
}

/**
 * The MCP servers the agent steps of the tree name (a step's own selection, else its template's). A server deleted
 * since the definition was written stops the start, as a deleted template does.
 */
async function loadMcpServers(
  db: Db,
  ownerId: string,
  workflows: readonly WorkflowDoc[],
  templates: Map<string, TemplateDoc>,
): Promise<{ ok: true; servers: Map<string, McpServerDoc> } | { ok: false; problem: string }> {
  const uses: { step: string; serverId: string }[] = [];
  for (const wf of workflows) {
    for (const step of wf.steps) {
      const template = step.template_id ? templates.get(step.template_id) : undefined;
      if (template?.step_type !== 'agent') continue;
      // A stdio server is the operator's, checked on write and by the worker that launches it: nothing to load.
      for (const sel of step.mcp_tools ?? template.mcp_tools ?? [])
        if (sel.server_id !== undefined) uses.push({ step: step.id, serverId: sel.server_id });
    }
  }
  if (uses.length === 0) return { ok: true, servers: new Map() };
  const found = await findOwnMcpServers(
    db,
    ownerId,
    uses.map((u) => u.serverId),
  );
  const servers = new Map(found.map((s) => [s._id, s]));
  const missing = uses.find((u) => !servers.has(u.serverId));
  if (missing) {
    return {
      ok: false,
      problem: `the workflow can no longer run: step "${missing.step}" uses MCP server ${missing.serverId}, which no longer exists`,
    };
  }
  return { ok: true, servers };
}
