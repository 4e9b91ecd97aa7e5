/**
 * What `apply` changes: the fields of the stored definition that differ from the file's, as paths (`name`,
 * `steps.total.config`, `+steps.notify`, `-steps.pause`, `config.input_schema`). Steps are matched by id.
 */

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function same(a: Json, b: Json): boolean {
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => same(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  return a === b;
}

/** Changed paths below `path` (objects key by key; anything else as a whole). */
function changes(before: Json, after: Json, path: string): string[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => changes(before[k], after[k], `${path}.${k}`));
  }
  return same(before, after) ? [] : [path];
}

function stepsById(steps: Json): Map<string, Record<string, Json>> {
  const out = new Map<string, Record<string, Json>>();
  for (const step of Array.isArray(steps) ? steps : []) {
    if (isObject(step) && typeof step.id === 'string') out.set(step.id, step);
  }
  return out;
}

/**
 * A stored step as the file would write it: a step that names its template (`template`) is compared without the id
 * the name resolved to, unless the file gives that id too.
 */
function comparable(stored: Record<string, Json>, written: Record<string, Json> | undefined): Record<string, Json> {
  if (stored.template === undefined || written?.template_id !== undefined) return stored;
  const { template_id: _resolved, ...rest } = stored;
  return rest;
}

/** Fields a workflow apply would change (empty: the stored workflow already is the file's). */
export function workflowChanges(stored: Record<string, Json>, file: Record<string, Json>): string[] {
  const out: string[] = [];
  if (stored.name !== file.name) out.push('name');
  if (!same(stored.description ?? null, file.description ?? null)) out.push('description');
  out.push(...changes(stored.config ?? {}, file.config ?? {}, 'config'));
  const before = stepsById(stored.steps);
  const after = stepsById(file.steps);
  for (const [id, step] of after) {
    const old = before.get(id);
    if (!old) out.push(`+steps.${id}`);
    else out.push(...changes(comparable(old, step), step, `steps.${id}`));
  }
  for (const id of before.keys()) if (!after.has(id)) out.push(`-steps.${id}`);
  const order = (steps: Map<string, unknown>) => [...steps.keys()].filter((id) => before.has(id) && after.has(id));
  if (order(before).join() !== order(after).join()) out.push('steps (order)');
  return out;
}

/** Fields a template apply would change; fields the file leaves out keep the defaults the API gives them. */
export function templateChanges(stored: Record<string, Json>, file: Record<string, Json>): string[] {
  return Object.keys(file)
    .sort()
    .flatMap((k) => changes(stored[k], file[k], k));
}

/** Steps whose template name now resolves to another template than the stored one (`steps.<id>.template_id`). */
export function resolvedTemplateChanges(stored: Record<string, Json>, wouldBe: Record<string, Json>): string[] {
  const before = stepsById(stored.steps);
  return [...stepsById(wouldBe.steps)].flatMap(([id, step]) =>
    step.template !== undefined && before.get(id)?.template_id !== step.template_id ? [`steps.${id}.template_id`] : [],
  );
}
