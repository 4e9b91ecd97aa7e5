/**
 * The sub-workflows a definition calls (`workflow_id` steps), loaded transitively from the owner's workflows, with
 * the problems a tree of them can have: an unknown workflow, a cycle (A calls B calls A), nesting deeper than
 * SUBWORKFLOW_MAX_DEPTH. Used on write (check-workflow.ts) and again at run start (the called workflows may have
 * changed since), where the loaded versions become the run's snapshot.
 */
import type { Db } from 'mongodb';
import { findWorkflows, type WorkflowDoc, type WorkflowStepDoc } from '../../db/workflows';

export interface WorkflowTree {
  /** Every workflow reachable from the root, by id (the root itself only when it calls itself indirectly). */
  workflows: Map<string, WorkflowDoc>;
  problems: string[];
}

function calls(steps: readonly WorkflowStepDoc[]): string[] {
  return steps.flatMap((s) => (s.workflow_id ? [s.workflow_id] : []));
}

/**
 * Loads what `root` calls, level by level (one query per level, at most maxDepth + 1 levels), and reports each
 * step whose sub-workflow is unknown, is part of a cycle, or nests too deep. `rootId` is the workflow's own id when
 * it exists (PATCH, run start): a tree that reaches it again is a cycle.
 */
export async function loadWorkflowTree(
  db: Db,
  ownerId: string,
  root: { id?: string; steps: readonly WorkflowStepDoc[] },
  maxDepth: number,
): Promise<WorkflowTree> {
  const workflows = new Map<string, WorkflowDoc>();
  let frontier = [...new Set(calls(root.steps))];
  for (let level = 0; level <= maxDepth && frontier.length > 0; level++) {
    const found = await findWorkflows(
      db,
      ownerId,
      frontier.filter((id) => !workflows.has(id)),
    );
    for (const wf of found) workflows.set(wf._id, wf);
    frontier = [...new Set(found.flatMap((wf) => calls(wf.steps)))].filter((id) => !workflows.has(id));
  }

  const problems: string[] = [];
  // Depth of a workflow = 1 + the deepest workflow it calls (0 when it calls none); Infinity marks a cycle.
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (id: string): number => {
    if (id === root.id || visiting.has(id)) return Infinity;
    const known = depth.get(id);
    if (known !== undefined) return known;
    const wf = workflows.get(id);
    if (!wf) return 0; // unknown: reported where it is called
    visiting.add(id);
    const d = Math.max(0, ...calls(wf.steps).map((c) => 1 + depthOf(c)));
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  root.steps.forEach((step, i) => {
    if (!step.workflow_id) return;
    const where = `steps[${i}] (${step.id}).workflow_id`;
    if (step.workflow_id === root.id) {
      problems.push(`${where}: a workflow cannot call itself`);
      return;
    }
    if (!workflows.has(step.workflow_id)) {
      problems.push(`${where}: unknown workflow "${step.workflow_id}"`);
      return;
    }
    const d = 1 + depthOf(step.workflow_id);
    if (d === Infinity) problems.push(`${where}: "${step.workflow_id}" calls back into this workflow (a cycle)`);
    else if (d > maxDepth) {
      problems.push(`${where}: sub-workflows would nest ${d} deep; the limit is ${maxDepth} (SUBWORKFLOW_MAX_DEPTH)`);
    } else {
      const missing = [...missingBelow(step.workflow_id, workflows)];
      if (missing.length > 0) problems.push(`${where}: "${step.workflow_id}" calls unknown workflow "${missing[0]}"`);
    }
  });
  return { workflows, problems };
}

/** Workflows called somewhere below `id` that do not exist (deleted since they were referenced). */
function missingBelow(id: string, workflows: Map<string, WorkflowDoc>, seen = new Set<string>()): Set<string> {
  const out = new Set<string>();
  if (seen.has(id)) return out;
  seen.add(id);
  for (const c of calls(workflows.get(id)?.steps ?? [])) {
    if (!workflows.has(c)) out.add(c);
    else for (const m of missingBelow(c, workflows, seen)) out.add(m);
  }
  return out;
}
