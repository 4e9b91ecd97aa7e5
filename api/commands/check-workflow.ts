/**
 * Write-time checks of a workflow definition that go beyond its shape: unique step ids, templates and sub-workflows
 * that exist and are visible to the owner, known tools, references to fields of `config.input_schema`, per-action
 * config rules, and the graph (check-graph.ts: dependencies, conditions, references only to steps that finish
 * first, maps and loops). Every problem names the step and the field (`steps[1] (notify).config.to: required`).
 */
import type { Db } from 'mongodb';
import { isId } from '../../db/ids';
import { findVisibleTemplates, type TemplateDoc } from '../../db/templates';
import { findOwnThread } from '../../db/threads';
import type { WorkflowConfigDoc, WorkflowStepDoc } from '../../db/workflows';
import { validateActionConfig } from '../../domain/actions/catalog';
import type { JsonObject } from '../../domain/json';
import { collectReferences, type PathSegment } from '../../domain/render';
import { describeSchemaProblems } from '../../domain/user-schema';
import { isToolName } from '../../domain/tools/catalog';
import { BadRequestError } from '../http/errors';
import { AGENT_STEP_FIELDS, NOT_ON_WORKFLOW_STEPS } from '../schemas/workflows';
import { checkGraph, type GraphLimitsConfig } from './check-graph';
import { workflowWarnings, type ModelSettings, type WriteWarning } from './model-warnings';
import { loadWorkflowTree } from '../../shared/runs/sub-workflows';
import { mcpToolProblems } from './check-mcp-tools';

/** At most this many problems are listed in one message. */
const MAX_LISTED = 8;

export type CheckLimits = GraphLimitsConfig & { SUBWORKFLOW_MAX_DEPTH: number } & ModelSettings & {
    /** Operator-declared stdio MCP servers, by name: the only `mcp_tools[].stdio` values accepted. */
    MCP_STDIO_SERVERS: Readonly<Record<string, unknown>>;
  };

/**
 * Throws BadRequestError listing every problem; returns the warnings of a definition that is accepted but will not
 * run as it stands (./model-warnings.ts). `id` is the workflow's own id when it has one (PATCH): a sub-workflow tree
 * that calls back into it is a cycle.
 */
export async function checkWorkflow(
  db: Db,
  ownerId: string,
  def: { id?: string; steps: WorkflowStepDoc[]; config: WorkflowConfigDoc },
  limits: CheckLimits,
): Promise<WriteWarning[]> {
  const problems: string[] = [];
  const schema = def.config.input_schema;
  if (schema) problems.push(...describeSchemaProblems(schema, 'config.input_schema'));

  const templates = await findVisibleTemplates(
    db,
    ownerId,
    def.steps.flatMap((s) => (s.template_id ? [s.template_id] : [])),
  );
  const tree = await loadWorkflowTree(db, ownerId, { id: def.id, steps: def.steps }, limits.SUBWORKFLOW_MAX_DEPTH);
  problems.push(...tree.problems);
  problems.push(
    ...(await mcpToolProblems(
      db,
      ownerId,
      def.steps.map((step, i) => ({ where: `steps[${i}] (${step.id}).mcp_tools`, selections: step.mcp_tools })),
      Object.keys(limits.MCP_STDIO_SERVERS),
    )),
  );
  problems.push(...(await threadProblems(db, ownerId, def.steps)));
  const seen = new Set<string>();
  def.steps.forEach((step, i) => {
    const where = `steps[${i}] (${step.id})`;
    if (seen.has(step.id)) problems.push(`${where}.id: duplicate step id "${step.id}"`);
    if ((step.template_id === undefined) === (step.workflow_id === undefined)) {
      problems.push(`${where}.template_id: exactly one of template_id and workflow_id is required`);
    } else if (step.workflow_id !== undefined) {
      for (const field of NOT_ON_WORKFLOW_STEPS) {
        if (step[field] !== undefined) problems.push(`${where}.${field}: a sub-workflow step does not take ${field}`);
      }
    } else if (step.template_id !== undefined) {
      const template = templates.get(step.template_id);
      if (!template) problems.push(`${where}.template_id: unknown template "${step.template_id}"`);
      else problems.push(...checkKind(step, template, where));
    }
    if (step.output_schema) problems.push(...describeSchemaProblems(step.output_schema, `${where}.output_schema`));
    for (const [j, tool] of (step.tools ?? []).entries()) {
      if (!isToolName(tool)) problems.push(`${where}.tools[${j}]: unknown tool "${tool}"`);
    }
    if (schema) problems.push(...checkInputReferences(step, where, schema));
    seen.add(step.id);
  });
  if (seen.size === def.steps.length) problems.push(...checkGraph(def.steps, templates, schema, limits));

  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED);
    if (problems.length > MAX_LISTED) listed.push(`and ${problems.length - MAX_LISTED} more`);
    throw new BadRequestError(listed.join('; '), 'invalid_workflow');
  }
  return workflowWarnings(limits, def.steps, templates);
}

function checkKind(step: WorkflowStepDoc, template: TemplateDoc, where: string): string[] {
  if (template.step_type === 'agent') return [];
  const problems: string[] = [];
  for (const field of AGENT_STEP_FIELDS) {
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

/**
 * A step's `thread` written as a literal id must be one of the owner's threads (decision 0603); one with references
 * is rendered per run, and an unknown or foreign thread then fails the step.
 */
async function threadProblems(db: Db, ownerId: string, steps: WorkflowStepDoc[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, step] of steps.entries()) {
    if (step.thread === undefined) continue;
    let refs: ReturnType<typeof collectReferences>;
    try {
      refs = collectReferences(step.thread, 'thread');
    } catch {
      continue; // reported by checkGraph
    }
    if (refs.length > 0) continue;
    const thread = isId('thr', step.thread) ? await findOwnThread(db, ownerId, step.thread) : null;
    if (!thread || thread.deleting) {
      problems.push(`steps[${i}] (${step.id}).thread: unknown thread "${step.thread}" (an id thr_… or a reference)`);
    }
  }
  return problems;
}

/** `{{input.…}}` references must name fields `config.input_schema` allows (other references: check-graph.ts). */
function checkInputReferences(step: WorkflowStepDoc, where: string, inputSchema: JsonObject): string[] {
  const problems: string[] = [];
  const fields = {
    input: step.input ?? null,
    config: step.config ?? {},
    prompt: step.prompt ?? '',
    thread: step.thread ?? '',
  };
  for (const [field, value] of Object.entries(fields)) {
    let refs: ReturnType<typeof collectReferences>;
    try {
      refs = collectReferences(value, field);
    } catch {
      continue; // reported by checkGraph
    }
    for (const { at, ref } of refs) {
      if (ref.source !== 'input') continue;
      const missing = missingInSchema(inputSchema, ref.path);
      if (missing) problems.push(`${where}.${at}: ${ref.text} is not in config.input_schema (${missing})`);
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
