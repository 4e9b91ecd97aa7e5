/**
 * Map and loop: a step that runs more than once. Each execution has its own id (`emails[3]`, `draft#2`), its own
 * retries, output and error, and its own side-effect keys.
 *
 * History: a map item of an action step costs about four events (activity scheduled/started/completed and its share
 * of the workflow tasks; 1 000 items measured 3 926 events), far below Temporal's 51 200-event limit;
 * agent items cost a few events per model and tool call. Sub-workflow items are child workflows, each with a history
 * of its own. A loop iteration costs the same as one execution of its step; the default bound is 100.
 */
import { ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import { uncancelledLocalActivities } from './local-activities';
import { evaluateCondition, parseCondition, type ConditionScope } from '../../domain/condition';
import { itemExecutionId, iterationExecutionId } from '../../domain/exec-id';
import type { JsonValue } from '../../domain/json';
import { render, type RenderContext } from '../../domain/render';
import { isOutputRef, type MapSettings, type LoopSettings, type OutputRef, type StepSnapshot } from '../../domain/run';
import { toRunError } from './run-errors';
import { addUsage, StepFailure, type RunEnv, type StepResult } from './run-env';
import { runOnce } from './step';

const { listLength } = uncancelledLocalActivities({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 20, initialInterval: '200 ms', maximumInterval: '10 seconds' },
});

/** Defaults for snapshots that carry no limits (none exist with map or loop; kept for type safety). */
const DEFAULT_MAP_MAX_ITEMS = 1000;
const DEFAULT_LOOP_MAX_ITERATIONS = 100;

/** The list a map runs over: inline, or a large output only the activities can read (items become references). */
async function itemsOf(
  map: MapSettings,
  ctx: RenderContext,
  env: RunEnv,
): Promise<{ count: number; item(i: number): JsonValue }> {
  const list = render(map.over, ctx) as JsonValue | OutputRef;
  if (isOutputRef(list)) {
    const count = await listLength({ run_id: env.runId, ref: list });
    if (count === null) throw new StepFailure({ reason: 'not_a_list', message: `map.over: ${map.over} is not a list` });
    const path = (list as OutputRef & { path?: (string | number)[] }).path ?? [];
    return { count, item: (i) => ({ ...list, path: [...path, i] }) };
  }
  if (!Array.isArray(list)) {
    throw new StepFailure({
      reason: 'not_a_list',
      message: `map.over: ${map.over} is ${list === null ? 'null' : typeof list}, not a list`,
    });
  }
  return { count: list.length, item: (i) => list[i] as JsonValue };
}

/**
 * Runs the step once per item, at most `concurrency` at a time, and gives the list of results in item order. With
 * `on_item_error: continue` a failed item's result is `{error: {reason, message}}` and the others go on; with `fail`
 * the first failure cancels the items still running and fails the step.
 */
export async function runMap(
  step: StepSnapshot,
  map: MapSettings,
  ctx: RenderContext,
  env: RunEnv,
): Promise<StepResult> {
  const limit = env.snapshot.limits?.map_max_items ?? DEFAULT_MAP_MAX_ITEMS;
  const items = await itemsOf(map, ctx, env);
  if (items.count > limit) {
    throw new StepFailure({
      reason: 'map_too_large',
      message: `map.over has ${items.count} items; the limit is ${limit} (MAP_MAX_ITEMS)`,
    });
  }
  await env.project(step.id, { kind: 'running', items: items.count });
  const results: (JsonValue | OutputRef)[] = new Array<JsonValue | OutputRef>(items.count).fill(null);
  const usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  let next = 0;
  let failed: StepFailure | undefined;
  const scope = new CancellationScope();
  const worker = async (): Promise<void> => {
    while (next < items.count && !failed) {
      const index = next++;
      const execId = itemExecutionId(step.id, index);
      try {
        const r = await runOnce(step, execId, { ...ctx, map: { item: items.item(index), index } }, env);
        results[index] = r.output;
        addUsage(usage, r.usage);
      } catch (err) {
        if (isCancellation(err)) {
          if (failed) return; // stopped by another item's failure
          throw err; // the run is being cancelled
        }
        const e = toRunError(execId, err);
        const error = { reason: e.reason, message: e.message, ...(e.code ? { code: e.code } : {}) };
        if (map.on_item_error === 'continue') {
          results[index] = { error };
          await env.project(execId, { kind: 'failed', error, output: { error } });
          continue;
        }
        failed = new StepFailure({ ...error, message: `item ${index} failed: ${e.message}` });
        scope.cancel();
        return;
      }
    }
  };
  const workers = Math.max(1, Math.min(map.concurrency, items.count));
  const settled = await scope.run(() => Promise.allSettled(Array.from({ length: workers }, worker)));
  if (failed) throw failed;
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  // Item results are JSON (OutputRefs are JSON objects too); the projection resolves and stores them as one value.
  const list = results as unknown as JsonValue;
  // Every call of every item, failed items included (`usage` sums only the items that completed).
  const used = env.stepUsage(step.id) ?? usage;
  const stored = await env.project(step.id, { kind: 'completed', output: list, usage: used });
  return { output: stored ?? list, usage: used };
}

/**
 * Runs the step until `until` holds after an iteration, at most `max_iterations` times. Each iteration sees the
 * previous one's output as `{{loop.previous}}`; the step's output is the last iteration's. Reaching the bound fails
 * the step with reason `loop_limit` (an `on_error: continue` step records it and the run goes on).
 */
export async function runLoop(
  step: StepSnapshot,
  loop: LoopSettings,
  ctx: RenderContext,
  conditionScope: ConditionScope,
  env: RunEnv,
): Promise<StepResult> {
  const bound = Math.min(loop.max_iterations, env.snapshot.limits?.loop_max_iterations ?? DEFAULT_LOOP_MAX_ITERATIONS);
  const until = parseCondition(loop.until);
  const usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  let previous: JsonValue | OutputRef | null = null;
  await env.project(step.id, { kind: 'running' });
  for (let iteration = 1; iteration <= bound; iteration++) {
    const execId = iterationExecutionId(step.id, iteration);
    const r = await runOnce(step, execId, { ...ctx, loop: { iteration, previous } }, env);
    addUsage(usage, r.usage);
    // `until` reads this iteration's output as the step's own (`steps.<id>.output`).
    const done = evaluateCondition(until, {
      ...conditionScope,
      steps: { ...conditionScope.steps, [step.id]: { status: 'completed', output: r.output } },
      loop: { iteration, previous },
    });
    previous = r.output;
    if (done) {
      const stored = await env.project(step.id, { kind: 'completed', output: r.output, usage });
      return { output: stored ?? r.output, usage };
    }
  }
  throw ApplicationFailure.nonRetryable(
    `loop.until never held in ${bound} iterations (loop.max_iterations)`,
    'loop_limit',
    { usage },
  );
}
