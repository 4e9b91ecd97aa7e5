/**
 * The text of a run's model calls while they run, folded from the event stream: agent.text.delta appends to the text
 * of (exec_id, turn), agent.text.void discards it for the retry's. The transcript's text is authoritative: a turn
 * whose call ended (agent.model_call) stays until the transcript, re-read, has it. Pure, so it is tested without a
 * browser (test/console/live-text.test.ts).
 */
import type { Schemas } from '../../client';

export interface LiveTurn {
  execId: string;
  turn: number;
  /** The model call's attempt the text belongs to. */
  attempt: number;
  text: string;
  /** The attempt whose partial text was discarded, while its retry writes. */
  voided: number | null;
  /** The call ended: its final text is in the transcript. */
  ended: boolean;
}

export interface LiveTexts {
  /** The last event applied: one at or below it is a repeat and changes nothing. */
  lastSeq: number;
  turns: LiveTurn[];
}

export const NO_LIVE_TEXT: LiveTexts = { lastSeq: 0, turns: [] };

function update(
  state: LiveTexts,
  seq: number,
  execId: string,
  turn: number,
  change: (t: LiveTurn | undefined) => LiveTurn,
): LiveTexts {
  const at = state.turns.findIndex((t) => t.execId === execId && t.turn === turn);
  const turns = at === -1 ? [...state.turns, change(undefined)] : state.turns.map((t, i) => (i === at ? change(t) : t));
  return { lastSeq: seq, turns };
}

export function applyLiveEvent(state: LiveTexts, event: Schemas['RunEvent']): LiveTexts {
  if (event.seq <= state.lastSeq) return state;
  switch (event.type) {
    case 'agent.text.delta':
      return update(state, event.seq, event.exec_id, event.turn, (t) => {
        // A delta of an older attempt is late and void; one of a newer attempt starts over (its void was missed).
        if (t && event.attempt < t.attempt) return t;
        const same = t?.attempt === event.attempt;
        return {
          execId: event.exec_id,
          turn: event.turn,
          attempt: event.attempt,
          text: (same ? t.text : '') + event.text,
          voided: t?.voided ?? null,
          ended: false,
        };
      });
    case 'agent.text.void':
      return update(state, event.seq, event.exec_id, event.turn, (t) =>
        t && event.attempt < t.attempt
          ? t
          : {
              execId: event.exec_id,
              turn: event.turn,
              attempt: event.attempt,
              text: '',
              voided: event.attempt - 1,
              ended: false,
            },
      );
    case 'agent.model_call':
      return end(state, event.seq, (t) => t.execId === event.exec_id && t.turn === event.turn);
    case 'step.started':
      // A new attempt of the whole step numbers its turns from 1 again: the old attempt's texts go.
      return { lastSeq: event.seq, turns: state.turns.filter((t) => t.execId !== event.exec_id) };
    case 'step.retrying':
    case 'step.completed':
    case 'step.failed':
    case 'step.skipped':
      // A call cut short (a failed or cancelled step) has no agent.model_call: its text is no longer being written.
      return end(state, event.seq, (t) => t.execId === event.exec_id);
    case 'run.ended':
      return end(state, event.seq, () => true);
    case 'step.waiting':
    case 'step.resumed':
    case 'step.child_run':
    case 'step.warning':
    case 'agent.tool_call':
      return { ...state, lastSeq: event.seq };
  }
}

function end(state: LiveTexts, seq: number, which: (t: LiveTurn) => boolean): LiveTexts {
  return { lastSeq: seq, turns: state.turns.map((t) => (which(t) && !t.ended ? { ...t, ended: true } : t)) };
}

/** The live turns of one execution (a step, a map item, a loop iteration), in turn order. */
export function liveTurnsOf(state: LiveTexts, execId: string): LiveTurn[] {
  return state.turns.filter((t) => t.execId === execId).sort((a, b) => a.turn - b.turn);
}

/**
 * The execution whose model call started writing last (ended or not), of those `within` accepts: the step a run page
 * shows when none is chosen (and the item or iteration of a map or loop step), kept after its call ends so the final
 * text replaces the live one in view.
 */
export function lastWriter(state: LiveTexts, within: (execId: string) => boolean = () => true): string | null {
  for (let i = state.turns.length - 1; i >= 0; i--) {
    const execId = state.turns[i]!.execId;
    if (within(execId)) return execId;
  }
  return null;
}
