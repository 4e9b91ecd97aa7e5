/**
 * What a run start reads first, in one query: the owner's workflow and the templates its steps name, joined by `_id`
 * (`$lookup`, index-backed), so the snapshot's sources cost one round trip rather than two in a row before the
 * Temporal start (C1 in docs/benchmarks.md). The ids are gathered into one top-level array first: the embedded test
 * server does not join on a path through an array (`steps.template_id`), MongoDB does either.
 */
import type { Db } from 'mongodb';
import { loadedTemplate, type TemplateDoc } from './templates';
import { loadedWorkflow, workflowsCollection, type WorkflowDoc } from './workflows';

export interface WorkflowWithTemplates {
  workflow: WorkflowDoc;
  /** The templates the workflow's own steps name that the owner may use (system, or theirs), by id. */
  templates: Map<string, TemplateDoc>;
}

/** The owner's workflow `id` with its steps' templates, or null when the owner has no such workflow. */
export async function findWorkflowWithTemplates(
  db: Db,
  ownerId: string,
  id: string,
): Promise<WorkflowWithTemplates | null> {
  const [row] = await workflowsCollection(db)
    .aggregate<WorkflowDoc & { stepwise_templates: TemplateDoc[] }>([
      { $match: { _id: id, owner_id: ownerId } },
      { $addFields: { stepwise_template_ids: '$steps.template_id' } },
      {
        $lookup: {
          from: 'agent_templates',
          localField: 'stepwise_template_ids',
          foreignField: '_id',
          as: 'stepwise_templates',
        },
      },
      { $project: { stepwise_template_ids: 0 } },
    ])
    .toArray();
  if (!row) return null;
  const { stepwise_templates: joined, ...workflow } = row;
  // Visible as `visibleTo` says (system, or the owner's): another user's template is as good as missing, and the
  // start names the step that uses it.
  const usable = joined.filter((t) => t.system || t.owner_id === ownerId);
  const templates = new Map(usable.map((t) => [t._id, loadedTemplate(t)]));
  return { workflow: loadedWorkflow(workflow), templates };
}
