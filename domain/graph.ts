/**
 * The shape of a workflow graph, shared by the API's write-time checks and the run workflow: which steps each step
 * waits for, in which order they can run, and which steps are its ancestors. Pure and workflow-safe.
 *
 * A step's `depends_on` lists the steps it waits for. When it is absent the step waits for the step before it in the
 * list (none for the first): a workflow written before graphs existed keeps meaning "in order". `depends_on: []`
 * starts a step at once.
 */

/** When a step whose dependencies have all finished runs, given how they finished. */
export type Trigger = 'any_ran' | 'all_ran' | 'all_done';
export const TRIGGERS = ['any_ran', 'all_ran', 'all_done'] as const satisfies readonly Trigger[];

/** What a failed step does to the run: stop it (default), or record the error as its output and go on. */
export type OnError = 'fail' | 'continue';
export const ON_ERROR = ['fail', 'continue'] as const satisfies readonly OnError[];

export interface GraphStep {
  id: string;
  depends_on?: readonly string[];
}

/** Each step's dependencies, with the "previous step" default filled in. Unknown ids are kept (checked elsewhere). */
export function resolveDependencies(steps: readonly GraphStep[]): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  steps.forEach((step, i) => {
    const previous = i > 0 ? steps[i - 1]?.id : undefined;
    deps.set(step.id, step.depends_on ? [...new Set(step.depends_on)] : previous !== undefined ? [previous] : []);
  });
  return deps;
}

/**
 * A topological order (Kahn's algorithm, ties broken by list position so the order is deterministic), or the ids
 * of the steps on or behind a cycle when there is one. Dependencies on unknown ids are ignored here.
 */
export function topologicalOrder(
  steps: readonly GraphStep[],
  deps: ReadonlyMap<string, readonly string[]>,
): { ok: true; order: string[] } | { ok: false; cyclic: string[] } {
  const known = new Set(steps.map((s) => s.id));
  const remaining = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const s of steps) {
    const own = (deps.get(s.id) ?? []).filter((d) => known.has(d));
    remaining.set(s.id, own.length);
    for (const d of own) dependents.set(d, [...(dependents.get(d) ?? []), s.id]);
  }
  const position = new Map(steps.map((s, i) => [s.id, i]));
  const ready = steps.filter((s) => remaining.get(s.id) === 0).map((s) => s.id);
  const order: string[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0));
    const next = ready.shift() as string;
    order.push(next);
    for (const d of dependents.get(next) ?? []) {
      const left = (remaining.get(d) ?? 0) - 1;
      remaining.set(d, left);
      if (left === 0) ready.push(d);
    }
  }
  if (order.length === steps.length) return { ok: true, order };
  return { ok: false, cyclic: steps.map((s) => s.id).filter((id) => !order.includes(id)) };
}

/** Every step `id` transitively depends on (its ancestors): the steps guaranteed to have finished before it starts. */
export function ancestorsOf(id: string, deps: ReadonlyMap<string, readonly string[]>): Set<string> {
  const seen = new Set<string>();
  const stack = [...(deps.get(id) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(deps.get(next) ?? []));
  }
  return seen;
}

/** Every step that transitively depends on `id` (its descendants): what a new output of `id` would change. */
export function descendantsOf(id: string, deps: ReadonlyMap<string, readonly string[]>): Set<string> {
  const dependents = new Map<string, string[]>();
  for (const [step, own] of deps) for (const d of own) dependents.set(d, [...(dependents.get(d) ?? []), step]);
  return ancestorsOf(id, dependents);
}
