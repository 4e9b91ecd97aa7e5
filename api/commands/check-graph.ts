/**
 * Write-time checks of a workflow's graph: dependencies (known, not itself, no cycles), conditions that parse, steps
 * that can never run, references only to steps guaranteed to have finished (ancestors in the graph), `map.*` and
 * `loop.*` references only where they mean something, maps over something that can be a list, and the configured
 * limits. Pure: the caller supplies what each step is (its template or sub-workflow) and the limits. Every problem
 * names the step and the field.
 */
import type { TemplateDoc } from '../../db/templates';
import type { WorkflowStepDoc } from '../../db/workflows';
import { actionOutputJsonSchema, getActionDeclaration } from '../../domain/actions/catalog';
import { conditionReferences, ConditionError, evaluateCondition, parseCondition } from '../../domain/condition';
import { ancestorsOf, resolveDependencies, topologicalOrder } from '../../domain/graph';
import type { JsonObject } from '../../domain/json';
import { wholeReference } from '../../domain/reference-scan';
import { collectReferences, parseReference, RenderError, type PathSegment, type Reference } from '../../domain/render';

export interface GraphLimitsConfig {
  MAP_MAX_CONCURRENCY: number;
  LOOP_MAX_ITERATIONS: number;
}

interface Located {
  at: string;
  ref: Reference;
}

/** Problems of the graph; `templates` resolves template steps (missing ones are reported elsewhere). */
export function checkGraph(
  steps: readonly WorkflowStepDoc[],
  templates: ReadonlyMap<string, TemplateDoc>,
  inputSchema: JsonObject | undefined,
  limits: GraphLimitsConfig,
): string[] {
  const problems: string[] = [];
  const where = (i: number) => `steps[${i}] (${steps[i]?.id})`;
  const ids = new Set(steps.map((s) => s.id));
  const deps = resolveDependencies(steps);
  const graphDeclared = steps.some((s) => s.depends_on !== undefined);

  steps.forEach((step, i) => {
    const seen = new Set<string>();
    (step.depends_on ?? []).forEach((d, j) => {
      const field = `${where(i)}.depends_on[${j}]`;
      if (d === step.id) problems.push(`${field}: a step cannot depend on itself`);
      else if (!ids.has(d)) problems.push(`${field}: unknown step "${d}"`);
      else if (seen.has(d)) problems.push(`${field}: "${d}" is listed twice`);
      seen.add(d);
    });
    if (step.map && step.loop) {
      problems.push(`${where(i)}.loop: map and loop cannot be combined on one step; put the loop in a sub-workflow`);
    }
    if (step.map?.concurrency !== undefined && step.map.concurrency > limits.MAP_MAX_CONCURRENCY) {
      problems.push(`${where(i)}.map.concurrency: at most ${limits.MAP_MAX_CONCURRENCY} (MAP_MAX_CONCURRENCY)`);
    }
    if (step.loop && step.loop.max_iterations > limits.LOOP_MAX_ITERATIONS) {
      problems.push(`${where(i)}.loop.max_iterations: at most ${limits.LOOP_MAX_ITERATIONS} (LOOP_MAX_ITERATIONS)`);
    }
  });
  if (problems.length > 0) return problems;

  const order = topologicalOrder(steps, deps);
  if (!order.ok) return [`depends_on: the steps ${order.cyclic.map((id) => `"${id}"`).join(', ')} form a cycle`];

  const neverRuns = new Set<string>();
  for (const id of order.order) {
    const i = steps.findIndex((s) => s.id === id);
    const step = steps[i] as WorkflowStepDoc;
    const own = deps.get(id) ?? [];
    const ancestors = ancestorsOf(id, deps);
    const refs: Located[] = [];

    // References in the step's fields: only ancestors (or the earlier steps, for a list without depends_on).
    const fields = {
      input: step.input ?? null,
      config: step.config ?? {},
      prompt: step.prompt ?? '',
      thread: step.thread ?? '',
    };
    for (const [field, value] of Object.entries(fields)) {
      try {
        refs.push(...collectReferences(value, field));
      } catch (err) {
        problems.push(`${where(i)}.${field}: ${err instanceof RenderError ? err.message : 'invalid reference'}`);
      }
    }
    const conditionRefs = (field: string, text: string | undefined): Reference[] | undefined => {
      if (text === undefined) return undefined;
      try {
        const refsOf = conditionReferences(parseCondition(text));
        refs.push(...refsOf.map((ref) => ({ at: field, ref })));
        return refsOf;
      } catch (err) {
        problems.push(`${where(i)}.${field}: ${err instanceof ConditionError ? err.message : 'invalid condition'}`);
        return undefined;
      }
    };
    const whenRefs = conditionRefs('when', step.when);
    conditionRefs('loop.until', step.loop?.until);
    if (step.map) {
      const whole = wholeReference(step.map.over.trim());
      if (!whole) problems.push(`${where(i)}.map.over: must be exactly one reference, e.g. {{input.items}}`);
      else {
        try {
          const ref = parseReference(whole.expr);
          refs.push({ at: 'map.over', ref });
          const notList = notAList(ref, steps, templates, inputSchema);
          if (notList) problems.push(`${where(i)}.map.over: ${ref.text} ${notList}`);
        } catch (err) {
          problems.push(`${where(i)}.map.over: ${err instanceof RenderError ? err.message : 'invalid reference'}`);
        }
      }
    }

    for (const { at, ref } of refs) {
      const field = `${where(i)}.${at}`;
      switch (ref.source) {
        case 'input':
          break;
        case 'steps':
        case 'step_status':
          if (ref.stepId === step.id) {
            // The loop's own condition reads the iteration just finished.
            if (at !== 'loop.until') problems.push(`${field}: ${ref.text} refers to the step itself`);
          } else if (!ancestors.has(ref.stepId)) {
            problems.push(
              graphDeclared || !ids.has(ref.stepId)
                ? `${field}: ${ref.text} refers to "${ref.stepId}", which is not guaranteed to have finished (not among its dependencies, direct or indirect)`
                : `${field}: ${ref.text} refers to "${ref.stepId}", which is not an earlier step`,
            );
          }
          break;
        case 'map':
          if (!step.map) problems.push(`${field}: ${ref.text} is only available in a map step`);
          else if (at === 'when' || at === 'map.over') {
            problems.push(`${field}: ${ref.text} cannot be used here (it is evaluated once for the whole step)`);
          }
          break;
        case 'loop':
          if (!step.loop) problems.push(`${field}: ${ref.text} is only available in a loop step`);
          else if (at === 'when')
            problems.push(`${field}: ${ref.text} cannot be used in when (checked before the loop)`);
          break;
      }
    }

    // Steps that can never run: a constant-false condition, or dependencies that can never run.
    let never = false;
    if (step.when !== undefined && whenRefs !== undefined && whenRefs.length === 0) {
      try {
        never = !evaluateCondition(parseCondition(step.when), { input: {}, steps: {} });
      } catch {
        never = false;
      }
    }
    const trigger = step.trigger ?? 'any_ran';
    if (trigger === 'any_ran' && own.length > 0 && own.every((d) => neverRuns.has(d))) never = true;
    if (trigger === 'all_ran' && own.some((d) => neverRuns.has(d))) never = true;
    if (never) {
      neverRuns.add(id);
      problems.push(
        step.when !== undefined && whenRefs?.length === 0
          ? `${where(i)}.when: the condition is always false, so the step can never run`
          : `${where(i)}.depends_on: the step can never run (its dependencies can never run)`,
      );
    }
  }
  return problems;
}

/** Why `ref` can provably not be a list, or undefined when it may be one. */
function notAList(
  ref: Reference,
  steps: readonly WorkflowStepDoc[],
  templates: ReadonlyMap<string, TemplateDoc>,
  inputSchema: JsonObject | undefined,
): string | undefined {
  switch (ref.source) {
    case 'input': {
      if (!inputSchema) return undefined;
      const type = schemaTypeAt(inputSchema, ref.path);
      return type && !type.includes('array')
        ? `is not a list in config.input_schema (type ${type.join(' | ')})`
        : undefined;
    }
    case 'steps': {
      const step = steps.find((s) => s.id === ref.stepId);
      if (!step || step.map) return undefined; // a map step's output is a list
      if (step.workflow_id)
        return ref.path.length === 0 ? "is an object (a sub-workflow's outputs by step id)" : undefined;
      const template = step.template_id ? templates.get(step.template_id) : undefined;
      if (!template) return undefined;
      if (template.step_type === 'action' && template.action_type) {
        if (template.action_type === 'transform') return undefined;
        const type = schemaTypeAt(
          actionOutputJsonSchema(getActionDeclaration(template.action_type)) as JsonObject,
          ref.path,
        );
        return type && !type.includes('array')
          ? `is not a list (the ${template.action_type} output there is ${type.join(' | ')})`
          : undefined;
      }
      const outputSchema = step.output_schema ?? template.output_schema ?? undefined;
      // Without an output_schema an agent answers in text.
      if (!outputSchema) return ref.path.length === 0 ? 'is text (the agent step has no output_schema)' : undefined;
      const type = schemaTypeAt(outputSchema, ref.path);
      return type && !type.includes('array')
        ? `is not a list in the step's output_schema (type ${type.join(' | ')})`
        : undefined;
    }
    case 'step_status':
      return 'is a status, not a list';
    case 'map':
    case 'loop':
      return undefined;
  }
}

/** The JSON Schema `type`(s) the schema declares at `path`, when it says (through properties / items). */
function schemaTypeAt(schema: JsonObject, path: PathSegment[]): string[] | undefined {
  let node: unknown = schema;
  for (const seg of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    const n = node as Record<string, unknown>;
    if (typeof seg === 'number') node = n.items;
    else {
      const props = n.properties as Record<string, unknown> | undefined;
      if (!props || typeof props !== 'object' || !Object.prototype.hasOwnProperty.call(props, seg)) return undefined;
      node = props[seg];
    }
  }
  if (node === null || typeof node !== 'object') return undefined;
  const type = (node as Record<string, unknown>).type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === 'string')) return type;
  return undefined;
}
