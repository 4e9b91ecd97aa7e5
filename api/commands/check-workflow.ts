/**
 * Write-time checks of a workflow definition that go beyond its shape: unique step ids, templates that exist and
 * are visible to the owner, known tools, references only to earlier steps and to fields of `config.input_schema`,
 * per-action config rules. Every problem names the step and the field (`steps[1] (notify).config.to: required`).
 */
import type { Db } from 'mongodb';
import { findVisibleTemplates, type TemplateDoc } from '../../db/templates';
import type { WorkflowConfigDoc, WorkflowStepDoc } from '../../db/workflows';
import { validateActionConfig } from '../../temporal/actions/registry';
import type { JsonObject } from '../../temporal/contract/json';
import { collectReferences, RenderError, type PathSegment } from '../../temporal/contract/render';
import { describeSchemaProblems } from '../../temporal/schemas/user-schema';
import { isToolName } from '../../temporal/tools/registry';
import { BadRequestError } from '../errors';

/** At most this many problems are listed in one message. */
const MAX_LISTED = 8;

export interface CheckedWorkflow {
  /** The templates the steps use, by id (the start command needs them again for the snapshot). */
  templates: Map<string, TemplateDoc>;
}

/** Throws BadRequestError listing every problem; returns the templates on success. */
export async function checkWorkflow(
  db: Db,
  ownerId: string,
  def: { steps: WorkflowStepDoc[]; config: WorkflowConfigDoc },
): Promise<CheckedWorkflow> {
  const problems: string[] = [];
  const schema = def.config.input_schema;
  if (schema) problems.push(...describeSchemaProblems(schema, 'config.input_schema'));

  const templates = await findVisibleTemplates(
    db,
    ownerId,
    def.steps.map((s) => s.template_id),
  );
  const seen = new Set<string>();
  def.steps.forEach((step, i) => {
    const where = `steps[${i}] (${step.id})`;
    if (seen.has(step.id)) problems.push(`${where}.id: duplicate step id "${step.id}"`);
    const template = templates.get(step.template_id);
    if (!template) {
      problems.push(`${where}.template_id: unknown template "${step.template_id}"`);
    } else {
      problems.push(...checkKind(step, template, where));
    }
    if (step.output_schema) problems.push(...describeSchemaProblems(step.output_schema, `${where}.output_schema`));
    for (const [j, tool] of (step.tools ?? []).entries()) {
      if (!isToolName(tool)) problems.push(`${where}.tools[${j}]: unknown tool "${tool}"`);
    }
    problems.push(...checkReferences(step, where, seen, schema));
    seen.add(step.id);
  });

  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED);
    if (problems.length > MAX_LISTED) listed.push(`and ${problems.length - MAX_LISTED} more`);
    throw new BadRequestError(listed.join('; '), 'invalid_workflow');
  }
  return { templates };
}

function checkKind(step: WorkflowStepDoc, template: TemplateDoc, where: string): string[] {
  if (template.step_type === 'agent') return [];
  const problems: string[] = [];
  for (const field of ['prompt', 'tools', 'tasks', 'model', 'max_turns', 'output_schema', 'egress'] as const) {
    if (step[field] !== undefined) problems.push(`${where}.${field}: only agent steps take ${field}`);
  }
  if (!template.action_type) return [...problems, `${where}.template_id: action template without action_type`];
  const merged = { ...template.config, ...(step.config ?? {}) };
  const result = validateActionConfig(template.action_type, merged, 'template');
  if (!result.ok) {
    for (const issue of result.issues) {
      problems.push(`${where}.config${issue.path ? `.${issue.path}` : ''}: ${issue.message}`);
    }
  }
  return problems;
}

function checkReferences(
  step: WorkflowStepDoc,
  where: string,
  earlier: ReadonlySet<string>,
  inputSchema: JsonObject | undefined,
): string[] {
  const problems: string[] = [];
  const fields = { input: step.input ?? null, config: step.config ?? {}, prompt: step.prompt ?? '' };
  for (const [field, value] of Object.entries(fields)) {
    let refs: ReturnType<typeof collectReferences>;
    try {
      refs = collectReferences(value, field);
    } catch (err) {
      problems.push(`${where}.${field}: ${err instanceof RenderError ? err.message : 'invalid reference'}`);
      continue;
    }
    for (const { at, ref } of refs) {
      if (ref.source === 'steps' || ref.source === 'step_status') {
        if (ref.stepId === step.id) problems.push(`${where}.${at}: ${ref.text} refers to the step itself`);
        else if (!earlier.has(ref.stepId)) {
          problems.push(`${where}.${at}: ${ref.text} refers to "${ref.stepId}", which is not an earlier step`);
        }
      } else if (ref.source === 'input' && inputSchema) {
        const missing = missingInSchema(inputSchema, ref.path);
        if (missing) problems.push(`${where}.${at}: ${ref.text} is not in config.input_schema (${missing})`);
      }
    }
  }
  return problems;
}

/**
 * Follows `path` through the schema's `properties` / `items` as far as the schema describes it. Returns a reason
 * when the schema rules the path out (a property not declared where `additionalProperties` is false, or not declared
 * at all where the schema lists its properties), else undefined.
 */
function missingInSchema(schema: JsonObject, path: PathSegment[]): string | undefined {
  let node: unknown = schema;
  for (const seg of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    const n = node as Record<string, unknown>;
    if (typeof seg === 'number') {
      if (n.items === undefined) return undefined;
      node = n.items;
      continue;
    }
    const props = n.properties;
    if (props && typeof props === 'object' && !Array.isArray(props)) {
      const p = props as Record<string, unknown>;
      if (Object.prototype.hasOwnProperty.call(p, seg)) {
        node = p[seg];
        continue;
      }
      if (n.additionalProperties === undefined || n.additionalProperties === false) return `no property "${seg}"`;
    }
    return undefined;
  }
  return undefined;
}
