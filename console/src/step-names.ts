/**
 * Names for a workflow definition's steps, as a run's status shows them: the template's name, or a sub-workflow's
 * name. The definition carries only ids, so each distinct id is read once (GET /agents/:id, GET /workflows/:id).
 */
import { get, type Template, type Workflow, type WorkflowStep } from './api';

/** Step id → its template's or sub-workflow's name; a step whose target cannot be read is left out. */
export async function loadStepNames(
  steps: readonly Pick<WorkflowStep, 'id' | 'template_id' | 'workflow_id'>[],
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const paths = new Set(steps.map(targetPath).filter((p): p is string => p !== null));
  const names = new Map<string, string>();
  await Promise.all(
    [...paths].map(async (path) => {
      try {
        names.set(path, (await get<Pick<Template | Workflow, 'name'>>(path, signal)).name);
      } catch {
        // Deleted, or the read failed: names only label the graph, so that step keeps its id there.
      }
    }),
  );
  const out = new Map<string, string>();
  for (const s of steps) {
    const path = targetPath(s);
    const name = path ? names.get(path) : undefined;
    if (name !== undefined) out.set(s.id, name);
  }
  return out;
}

function targetPath(s: Pick<WorkflowStep, 'template_id' | 'workflow_id'>): string | null {
  if (s.template_id) return `/agents/${encodeURIComponent(s.template_id)}`;
  if (s.workflow_id) return `/workflows/${encodeURIComponent(s.workflow_id)}`;
  return null;
}
