/**
 * STUB — being written (see the helper brief). Conditions of workflow graphs: `when` (run the step or skip it) and
 * `loop.until`. Pure and workflow-safe.
 */
import type { JsonObject, JsonValue } from './json';
import type { Reference } from './render';
import type { OutputRef, StepStatus } from './run';

export class ConditionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionError';
  }
}

/** A parsed condition (opaque to callers). */
export interface Condition {
  readonly text: string;
}

/** What a condition can read. */
export interface ConditionScope {
  input: JsonObject;
  /** Steps that have finished (completed, skipped, or failed and continued): output is null for skipped ones. */
  steps: Record<string, { status: StepStatus; output: JsonValue | OutputRef | null }>;
  map?: { item: JsonValue; index: number };
  loop?: { iteration: number; previous: JsonValue | OutputRef | null };
}

export function parseCondition(text: string): Condition {
  throw new ConditionError(`not implemented: ${text}`);
}

export function conditionReferences(_condition: Condition): Reference[] {
  return [];
}

export function evaluateCondition(_condition: Condition, _scope: ConditionScope): boolean {
  return false;
}
