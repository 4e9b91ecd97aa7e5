/**
 * The templates and sub-workflows a run of a workflow uses, as they are now — read when the run starts, by the API
 * (endpoint 7, hooks) and by the worker (scheduled runs). The definition was checked on write; since then a template
 * or a called workflow may have been deleted, or a called workflow changed so that the tree now has a cycle or nests
 * too deep: each is a problem naming the step, which the caller turns into its own kind of refusal.
 */
import type { Db } from 'mongodb';
import { findVisibleTemplates } from '../../db/templates';
import type { WorkflowDoc } from '../../db/workflows';
import type { SnapshotSources } from './snapshot';
import { loadWorkflowTree } from './sub-workflows';

export type LoadedSources = { ok: true; sources: SnapshotSources } | { ok: false; problem: string };

export async function loadSnapshotSources(
  db: Db,
  ownerId: string,
  workflow: WorkflowDoc,
  maxDepth: number,
): Promise<LoadedSources> {
  const tree = await loadWorkflowTree(db, ownerId, { id: workflow._id, steps: workflow.steps }, maxDepth);
  if (tree.problems.length > 0) {
    return { ok: false, problem: `the workflow can no longer run: ${tree.problems.join('; ')}` };
  }
  const all = [workflow, ...tree.workflows.values()];
  const templates = await findVisibleTemplates(
    db,
    ownerId,
    all.flatMap((wf) => wf.steps.flatMap((s) => (s.template_id ? [s.template_id] : []))),
  );
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
  return { ok: true, sources: { templates, workflows: tree.workflows } };
}
