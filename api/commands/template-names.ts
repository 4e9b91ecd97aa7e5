/**
 * Steps that name their template (`template: "Summarizer"`) instead of giving its id: resolved when the workflow is
 * written, so the stored definition (and every run snapshot taken from it) holds a template id as before, and a
 * definition kept in a repository applies unchanged on any deployment. Resolving at write time means a template
 * deleted and re-created under the same name needs the workflow written again (`workflows apply` does that); the
 * name is kept beside the id so an export gives the definition back as it was written.
 *
 * So that a name finds one template, names are unique among one owner's templates (docs/decisions/0020): a create or
 * rename onto a name the owner already uses is a 409 naming the template that has it. A system template may share a
 * user template's name; the owner's own wins.
 */
import type { Db } from 'mongodb';
import { findOwnTemplateIdByName, findVisibleTemplatesByName } from '../../db/templates';
import type { WorkflowStepDoc } from '../../db/workflows';
import { BadRequestError, ConflictError } from '../http/errors';
import { isDuplicateKey } from '../../db/duplicate-key';

function nameTaken(name: string, holder: string): ConflictError {
  return new ConflictError(
    `name: you already have an agent template named "${name}" (${holder}); choose another name or change that one`,
    'template_name_taken',
  );
}

/** Refuses `name` when another of the owner's templates has it (`exceptId`: the template being renamed). */
export async function assertTemplateNameFree(db: Db, ownerId: string, name: string, exceptId?: string): Promise<void> {
  const holder = await findOwnTemplateIdByName(db, ownerId, name);
  if (holder !== null && holder !== exceptId) throw nameTaken(name, holder);
}

/**
 * A template write that sets `name`: checked first (a dry run, and a database whose name index is not built yet,
 * get the same answer), then written; a duplicate key (a concurrent write took the name after the check) becomes the
 * same 409.
 */
export async function writeWithTemplateName<T>(
  db: Db,
  ownerId: string,
  name: string,
  exceptId: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  await assertTemplateNameFree(db, ownerId, name, exceptId);
  try {
    return await write();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const holder = await findOwnTemplateIdByName(db, ownerId, name);
    if (holder === null || holder === exceptId) throw err;
    throw nameTaken(name, holder);
  }
}

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
