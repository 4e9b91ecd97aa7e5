/**
 * The live-text events of a run's event stream (docs/runs.md): an agent's text while its model call runs. Named here
 * for both clients until the document's RunEvent carries them; then these become `Extract`s of it.
 */
import type { Schemas } from './index';

interface LiveTextBase {
  seq: number;
  run_id: string;
  at: string;
  exec_id: string;
  step_id: string;
  /** The model-call number of the step execution, as agent.model_call's `turn`. */
  turn: number;
  /** The model call's attempt, from 1. */
  attempt: number;
}

/** New characters: appended to the text of (exec_id, turn). */
export interface TextDeltaEvent extends LiveTextBase {
  type: 'agent.text.delta';
  text: string;
}

/** A retried model call: the text of (exec_id, turn) so far is void; the deltas of `attempt` follow. */
export interface TextVoidEvent extends LiveTextBase {
  type: 'agent.text.void';
}

/** Every event of a run's stream. */
export type StreamEvent = Schemas['RunEvent'] | TextDeltaEvent | TextVoidEvent;
