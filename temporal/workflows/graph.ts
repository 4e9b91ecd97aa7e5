/**
 * The graph scheduler: starts every step whose dependencies have finished, as many at once as are ready, skips the
 * ones whose condition is false or whose dependencies were skipped (by the step's trigger), and stops the run at
 * the first failure of a step that does not go on after errors (cancelling the branches still running).
 *
 * A step without `depends_on` waits for the previous one. Every step runs in its own activity. The order and kind
 * of commands issued here is what the replay test over test/temporal/histories/ holds (docs/decisions/0430).
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import { evaluateCondition, parseCondition, type ConditionScope } from '../../domain/condition';
import { resolveDependencies, type Trigger } from '../../domain/graph';
import type { JsonValue } from '../../domain/json';
import type { RenderContext } from '../../domain/render';
import type { OutputRef, RunError, StepSnapshot, StepStatus } from '../../domain/run';
import { runLoop, runMap } from './repeat';
import { toRunError } from './run-errors';
import { addUsage, type RunEnv, type StepResult } from './run-env';
import { runOnce } from './step';

export interface StepRecord {
  status: StepStatus;
  /** Completed: the output; failed and continued: `{error}`; skipped: null. */
  output?: JsonValue | OutputRef | null;
}

/** How the graph ended when it did not complete: the step that failed the run, or the run's cancellation. */
export type GraphStop = { kind: 'failed'; error: RunError; cause: unknown } | { kind: 'cancelled'; cause: unknown };

const FINISHED: readonly StepStatus[] = ['completed', 'failed', 'skipped'];

export class Graph {
  readonly records = new Map<string, StepRecord>();
  private readonly deps: Map<string, string[]>;

  constructor(private readonly env: RunEnv) {
    const steps = env.snapshot.steps;
    // A rerun's reused steps are finished before the run begins: their outputs come from the run it repeats.
    const reused = env.snapshot.rerun?.reused_json ?? {};
    for (const s of steps) {
      // Own keys only: a step may be called `constructor`.
      const json = Object.prototype.hasOwnProperty.call(reused, s.id) ? reused[s.id] : undefined;
      const output = json !== undefined ? (JSON.parse(json) as JsonValue | OutputRef) : undefined;
      this.records.set(s.id, output !== undefined ? { status: 'completed', output } : { status: 'pending' });
    }
    this.deps = resolveDependencies(steps);
  }

  statuses(): Record<string, StepStatus> {
    return Object.fromEntries([...this.records].map(([id, r]) => [id, r.status]));
  }

  /** Outputs by step id: completed steps and failed-and-continued ones (whose output is their error). */
  outputs(): Record<string, JsonValue | OutputRef> {
    const out: Record<string, JsonValue | OutputRef> = {};
    for (const [id, r] of this.records) {
      if ((r.status === 'completed' || r.status === 'failed') && r.output !== undefined) out[id] = r.output ?? null;
    }
    return out;
  }

  /** Runs the graph to its end; returns undefined when every step finished, else why it stopped. */
  async run(): Promise<GraphStop | undefined> {
    const running = new Map<string, { scope: CancellationScope; done: Promise<void> }>();
    let stop: GraphStop | undefined;

    const start = (step: StepSnapshot): void => {
      const record = this.record(step.id);
      record.status = 'running';
      const scope = new CancellationScope();
      const done = scope
        .run(() => this.execute(step))
        .then(
          (result) => {
            record.status = 'completed';
            record.output = result.output;
            addUsage(this.env.usage, result.usage);
          },
          async (err: unknown) => {
            if (isCancellation(err)) {
              // Stopped by another step's failure, or the run itself is being cancelled. The step stays `running`
              // here: the run's outcome (deriveOutcome) closes it with the reason.
              if (!stop) stop = { kind: 'cancelled', cause: err };
              return;
            }
            record.status = 'failed';
            const error = toRunError(step.id, err);
            if (step.on_error === 'continue' && !stop) {
              const stepError = { reason: error.reason, message: error.message, ...codeOf(error) };
              record.output = { error: stepError };
              try {
                // The status shows what later steps read: the error (code included) and the output made of it.
                const used = this.env.stepUsage(step.id);
                await this.env.project(step.id, {
                  kind: 'failed',
                  error: stepError,
                  output: record.output,
                  ...(used ? { usage: used } : {}),
                });
              } catch (projectErr) {
                // Only a cancellation gets here (projection writes are best effort).
                if (!stop) stop = { kind: 'cancelled', cause: projectErr };
              }
              return;
            }
            if (!stop) stop = { kind: 'failed', error, cause: err };
          },
        )
        .finally(() => running.delete(step.id));
      running.set(step.id, { scope, done });
    };

    for (;;) {
      // Every await inside decide() is followed by another pass over the steps, so a step that finished meanwhile
      // is seen: when decide() returns with nothing running, nothing more can start.
      if (!stop) {
        try {
          await this.decide(start, () => stop !== undefined);
        } catch (err) {
          if (!isCancellation(err)) throw err;
          stop = { kind: 'cancelled', cause: err }; // the run was cancelled during a skip's projection write
        }
      }
      if (stop) {
        for (const r of running.values()) r.scope.cancel();
        await Promise.allSettled([...running.values()].map((r) => r.done));
        return stop;
      }
      if (running.size === 0) return undefined;
      await Promise.race([...running.values()].map((r) => r.done));
    }
  }

  /**
   * Starts or skips every pending step whose dependencies have all finished, until nothing changes (a skip can
   * decide the steps after it). List order breaks ties, so the decisions are deterministic.
   */
  private async decide(start: (step: StepSnapshot) => void, stopped: () => boolean): Promise<void> {
    for (let changed = true; changed;) {
      changed = false;
      for (const step of this.env.snapshot.steps) {
        // A step failed (or the run was cancelled) while a skip was being written: start nothing more.
        if (stopped()) return;
        const record = this.record(step.id);
        if (record.status !== 'pending') continue;
        const deps = this.deps.get(step.id) ?? [];
        if (!deps.every((d) => FINISHED.includes(this.record(d).status))) continue;
        const skip = this.skipReason(step, deps);
        if (skip === undefined) {
          start(step);
          continue;
        }
        record.status = 'skipped';
        record.output = null;
        changed = true;
        await this.env.project(step.id, { kind: 'skipped', reason: skip });
      }
    }
  }

  /** Why the step is skipped by its trigger or its condition, or undefined when it runs. */
  private skipReason(step: StepSnapshot, deps: string[]): string | undefined {
    const skipped = deps.filter((d) => this.record(d).status === 'skipped');
    const trigger: Trigger = step.trigger ?? 'any_ran';
    switch (trigger) {
      case 'any_ran':
        if (deps.length > 0 && skipped.length === deps.length) return 'every dependency was skipped';
        break;
      case 'all_ran':
        if (skipped.length > 0) return `dependency "${skipped[0]}" was skipped (trigger all_ran)`;
        break;
      case 'all_done':
        break;
    }
    if (step.when === undefined) return undefined;
    // A condition that cannot be evaluated (e.g. it reads into a large output) fails the step when it starts.
    try {
      return evaluateCondition(parseCondition(step.when), this.conditionScope())
        ? undefined
        : `condition false: ${step.when}`;
    } catch {
      return undefined;
    }
  }

  private async execute(step: StepSnapshot): Promise<StepResult> {
    const scope = this.conditionScope();
    // Re-evaluated here so that an evaluation error fails the step (with reason invalid_condition) like any error.
    if (step.when !== undefined) evaluateCondition(parseCondition(step.when), scope);
    const ctx = this.renderContext();
    if (step.map) return runMap(step, step.map, ctx, this.env);
    if (step.loop) return runLoop(step, step.loop, ctx, scope, this.env);
    return runOnce(step, step.id, ctx, this.env);
  }

  private renderContext(): RenderContext {
    return { input: this.env.snapshot.input, steps: this.finishedOutputs(), statuses: this.statuses() };
  }

  /** What references can reach: every finished step's output (null for skipped ones). */
  private finishedOutputs(): Record<string, JsonValue | OutputRef> {
    const out: Record<string, JsonValue | OutputRef> = {};
    for (const [id, r] of this.records) {
      if (FINISHED.includes(r.status) && r.output !== undefined) out[id] = r.output ?? null;
    }
    return out;
  }

  private conditionScope(): ConditionScope {
    const steps: ConditionScope['steps'] = {};
    for (const [id, r] of this.records) {
      if (FINISHED.includes(r.status)) steps[id] = { status: r.status, output: r.output ?? null };
    }
    return { input: this.env.snapshot.input, steps };
  }

  private record(id: string): StepRecord {
    const r = this.records.get(id);
    if (!r) throw new Error(`unknown step ${id}`);
    return r;
  }
}

function codeOf(error: RunError): { code?: string } {
  return error.code ? { code: error.code } : {};
}
