/**
 * Steps that name their template (`template: "Summarizer"`) instead of giving its id: resolved when the workflow is
 * written, so the stored definition (and every run snapshot taken from it) holds a template id as before, and a
 * definition kept in a repository applies unchanged on any deployment. Resolving at write time means a template
 * deleted and re-created under the same name needs the workflow written again (`workflows apply` does that); the
 * name is kept beside the id so an export gives the definition back as it was written.
 */
import type { Db } from 'mongodb';
import { findVisibleTemplatesByName } from '../../db/templates';
import type { WorkflowStepDoc } from '../../db/workflows';
import { BadRequestError } from '../errors';

/** `steps` with the template_id of every named template filled in; throws BadRequestError naming each bad step. */
export async function resolveTemplateNames(
  db: Db,
  ownerId: string,
  steps: WorkflowStepDoc[],
): Promise<WorkflowStepDoc[]> {
  const names = steps.flatMap((s) => (s.template === undefined ? [] : [s.template]));
  if (names.length === 0) return steps;
  const found = await findVisibleTemplatesByName(db, ownerId, names);
  const problems: string[] = [];
  const resolved = steps.map((step, i) => {
    if (step.template === undefined) return step;
    const where = `steps[${i}] (${step.id}).template`;
    if (step.workflow_id !== undefined) {
      problems.push(`${where}: exactly one of template, template_id and workflow_id is required`);
      return step;
    }
    const named = found.filter((t) => t.name === step.template);
    // Your own template of that name wins over a system one: the name is yours to control.
    const own = named.filter((t) => !t.system);
    const candidates = own.length > 0 ? own : named;
    const [only, ...more] = candidates;
    if (!only) {
      problems.push(
        `${where}: no template named "${step.template}" (GET /api/v1/agents lists yours and the system ones)`,
      );
      return step;
    }
    if (more.length > 0) {
      problems.push(
        `${where}: ${candidates.length} of your templates are named "${step.template}"; rename all but one or use template_id`,
      );
      return step;
    }
    return { ...step, template_id: only._id };
  });
  if (problems.length > 0) throw new BadRequestError(problems.join('; '), 'invalid_workflow');
  return resolved;
}
