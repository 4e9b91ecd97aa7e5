/**
 * Which steps of a replayed experiment item run again (docs/decisions/0640-replay-experiments.md): a step is answered
 * from the recorded run when its definition — as the target workflow's snapshot has it, overrides applied — equals the
 * recorded run's, every step it depends on is reproduced too, and the record holds its output. A step the record shows
 * skipped is reproduced when the same holds (its condition reads only reproduced outputs, so it is skipped again).
 * Everything else runs again: a changed step, its downstream, a step the record has no output for.
 */
import { getActionDeclaration } from './actions/catalog';
import { resolveDependencies, topologicalOrder } from './graph';
import { canonicalJson, type JsonValue } from './json';
import type { StepSnapshot } from './run';
import type { StepStatus } from './run-status';

/** A step of the recorded run as the plan reads it. */
export interface RecordedStep {
  id: string;
  status: StepStatus;
  has_output: boolean;
}

export interface ReplayPlan {
  /** Steps whose recorded outputs the new run takes over, in the target's order. */
  reused: string[];
  /** Steps that run again, in the target's order, each with why. */
  executed: { step_id: string; reason: string }[];
}

/** A step's definition as compared: names are labels (a renamed template is the same step). */
function definition(step: StepSnapshot): string {
  const { template_name: _name, ...rest } = step;
  if (rest.kind === 'workflow') {
    const { workflow_name: _wf, ...child } = rest.workflow;
    return canonicalJson({ ...rest, workflow: { ...child, steps: child.steps.map(definition) } });
  }
  return canonicalJson(rest);
}

export function planReplay(args: {
  target: readonly StepSnapshot[];
  recordedSteps: readonly StepSnapshot[];
  recorded: readonly RecordedStep[];
  /** The item's input differs from the recorded run's: nothing can be reproduced. */
  inputChanged: boolean;
}): ReplayPlan {
  const deps = resolveDependencies(args.target);
  const topo = topologicalOrder(args.target, deps);
  const order = topo.ok ? topo.order : args.target.map((s) => s.id);
  const byId = new Map(args.target.map((s) => [s.id, s]));
  const recordedDef = new Map(args.recordedSteps.map((s) => [s.id, definition(s)]));
  const recorded = new Map(args.recorded.map((s) => [s.id, s]));
  const reproduced = new Set<string>();
  const reused = new Set<string>();
  const why = new Map<string, string>();
  for (const id of order) {
    const step = byId.get(id);
    if (!step) continue;
    const rec = recorded.get(id);
    const changedDep = (deps.get(id) ?? []).find((d) => !reproduced.has(d));
    if (args.inputChanged) why.set(id, "the item's input differs from the recorded run's");
    else if (!recordedDef.has(id) || !rec) why.set(id, 'the recorded run has no such step');
    else if (recordedDef.get(id) !== definition(step)) why.set(id, 'its definition changed');
    else if (changedDep !== undefined) why.set(id, `it depends on "${changedDep}", which runs again`);
    else if (rec.status === 'completed' && rec.has_output) {
      reproduced.add(id);
      reused.add(id);
    } else if (rec.status === 'skipped') reproduced.add(id);
    else why.set(id, `the recorded run has no output for it (${rec.status})`);
  }
  return {
    reused: args.target.filter((s) => reused.has(s.id)).map((s) => s.id),
    executed: args.target.flatMap((s) => {
      const reason = why.get(s.id);
      return reason !== undefined ? [{ step_id: s.id, reason }] : [];
    }),
  };
}

/**
 * Why the plan would send a side effect again (an HTTP request, an e-mail — directly, or inside a sub-workflow that
 * runs again), naming the first such step; undefined when it would not. Replay never re-sends one.
 */
export function replaySideEffect(target: readonly StepSnapshot[], plan: ReplayPlan): string | undefined {
  for (const { step_id, reason } of plan.executed) {
    const step = target.find((s) => s.id === step_id);
    const effect = step ? sideEffectIn(step) : undefined;
    if (effect === undefined) continue;
    const where = effect === step_id ? '' : ` (its sub-workflow's step "${effect}")`;
    return `step "${step_id}"${where} has a side effect and would run again in replay (${reason}); replay never re-sends one — use mode "live", or leave the step and what it depends on unchanged`;
  }
  return undefined;
}

function sideEffectIn(step: StepSnapshot): string | undefined {
  switch (step.kind) {
    case 'action':
      return getActionDeclaration(step.action_type).effect === 'side_effect' ? step.id : undefined;
    case 'workflow':
      for (const child of step.workflow.steps) {
        const found = sideEffectIn(child);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'agent':
      return undefined;
  }
}

/** One step of a replayed item's run against its recorded run: taken over, or run again and with what result. */
export interface ReplayStep {
  step_id: string;
  /** `replayed`: its output was taken from the record (nothing ran); `executed`: it ran again; `skipped`. */
  how: 'replayed' | 'executed' | 'skipped';
  /** Executed steps: whether the output differs from the recorded one (null otherwise). */
  changed: boolean | null;
  /** Executed steps whose output changed: both outputs (each cut to a preview above REPLAY_DIFF_CHARS of JSON). */
  recorded?: JsonValue;
  output?: JsonValue;
}

export interface ReplayDiff {
  source_run_id: string;
  steps: ReplayStep[];
}

/** Outputs shown in a replay difference are cut above this many characters of JSON (the runs keep them whole). */
export const REPLAY_DIFF_CHARS = 2_000;

/** The per-step difference of a replayed item's run from its recorded run (outputs resolved by the caller). */
export function replayDiff(
  sourceRunId: string,
  steps: readonly { id: string; status: StepStatus; replayed: boolean; output: JsonValue | undefined }[],
  recorded: ReadonlyMap<string, JsonValue>,
): ReplayDiff {
  return {
    source_run_id: sourceRunId,
    steps: steps.map((s): ReplayStep => {
      if (s.replayed) return { step_id: s.id, how: 'replayed', changed: null };
      if (s.status === 'skipped') return { step_id: s.id, how: 'skipped', changed: null };
      const before = recorded.get(s.id);
      const changed = before === undefined || canonicalJson(before) !== canonicalJson(s.output ?? null);
      if (!changed) return { step_id: s.id, how: 'executed', changed };
      return {
        step_id: s.id,
        how: 'executed',
        changed,
        recorded: before === undefined ? null : preview(before),
        output: preview(s.output ?? null),
      };
    }),
  };
}

function preview(value: JsonValue): JsonValue {
  const json = JSON.stringify(value);
  return json.length <= REPLAY_DIFF_CHARS
    ? value
    : { truncated: true, chars: json.length, preview: json.slice(0, REPLAY_DIFF_CHARS) };
}
