/**
 * The console's live text, folded from the event stream: deltas grow the text of (exec_id, turn), a void replaces it
 * with the retry's, the call's end marks it ended (the transcript then has the final text), a repeated event changes
 * nothing.
 */
import type { Schemas } from '../../client';
import { applyLiveEvent, liveTurnsOf, NO_LIVE_TEXT, lastWriter, type LiveTexts } from '../../console/src/live-text';
import { documentedEvent } from '../helpers/run-event-doc';

type RunEvent = Schemas['RunEvent'];

const at = (seq: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, seq)).toISOString();
const exec = (execId: string) => ({
  run_id: 'run_live0000000001',
  exec_id: execId,
  step_id: execId.replace(/\[.*/, ''),
});
const delta = (seq: number, turn: number, attempt: number, text: string, execId = 'draft'): RunEvent =>
  documentedEvent({ ...exec(execId), seq, at: at(seq), type: 'agent.text.delta', turn, attempt, text });
const voided = (seq: number, turn: number, attempt: number): RunEvent =>
  documentedEvent({ ...exec('draft'), seq, at: at(seq), type: 'agent.text.void', turn, attempt });
const modelCall = (seq: number, turn: number): RunEvent =>
  documentedEvent({
    ...exec('draft'),
    seq,
    at: at(seq),
    type: 'agent.model_call',
    turn,
    usage: { input_tokens: 1, output_tokens: 1 },
    tool_calls: 0,
  });
const fold = (events: RunEvent[], state: LiveTexts = NO_LIVE_TEXT) => events.reduce(applyLiveEvent, state);
const texts = (state: LiveTexts, execId = 'draft') => liveTurnsOf(state, execId).map((t) => [t.turn, t.text, t.ended]);

describe('console: live text', () => {
  it('grows the text of each turn of each execution, and marks a turn ended when its call ends', () => {
    const state = fold([
      delta(1, 1, 1, 'Plan: '),
      delta(2, 1, 1, 'fetch.', 'map[0]'),
      delta(3, 1, 1, 'look it up'),
      modelCall(4, 1),
      delta(5, 2, 1, 'Done'),
    ]);
    expect(texts(state)).toEqual([
      [1, 'Plan: look it up', true],
      [2, 'Done', false],
    ]);
    expect(texts(state, 'map[0]')).toEqual([[1, 'fetch.', false]]);
    // The page's default step: the one whose text started last, still once its call has ended.
    expect(lastWriter(state)).toBe('draft');
    expect(lastWriter(fold([modelCall(6, 2)], state))).toBe('draft');
  });

  it('names the last writer among the executions a filter accepts: the item a map step shows', () => {
    const state = fold([delta(1, 1, 1, 'a', 'map[1]'), delta(2, 1, 1, 'b', 'map[0]'), delta(3, 1, 1, 'c')]);
    expect(lastWriter(state)).toBe('draft');
    expect(lastWriter(state, (id) => id.startsWith('map['))).toBe('map[0]');
    expect(lastWriter(state, (id) => id === 'map[1]')).toBe('map[1]');
    expect(lastWriter(state, (id) => id.startsWith('loop#'))).toBeNull();
  });

  it('replaces a voided attempt’s text with the retry’s, and ignores a late delta of the old attempt', () => {
    const state = fold([delta(1, 1, 1, 'Half'), voided(2, 1, 2), delta(3, 1, 1, ' late'), delta(4, 1, 2, 'Whole')]);
    expect(liveTurnsOf(state, 'draft')).toEqual([
      { execId: 'draft', turn: 1, attempt: 2, text: 'Whole', voided: 1, ended: false },
    ]);
  });

  it('applies each event once: a stream followed again from the start repeats nothing', () => {
    const events = [delta(1, 1, 1, 'a'), delta(2, 1, 1, 'b'), delta(3, 1, 1, 'c')];
    const once = fold(events);
    expect(fold(events, once)).toBe(once);
    expect(texts(once)).toEqual([[1, 'abc', false]]);
  });

  it('drops the texts of an execution that starts again, and ends every text when the run ends', () => {
    const writing = fold([delta(1, 1, 1, 'first try'), delta(2, 1, 1, 'other', 'map[0]')]);
    const restarted = fold(
      [documentedEvent({ ...exec('draft'), seq: 3, at: at(3), type: 'step.started', attempt: 2 })],
      writing,
    );
    expect(texts(restarted)).toEqual([]);
    const ended = fold(
      [
        documentedEvent({
          run_id: 'run_live0000000001',
          seq: 4,
          at: at(4),
          type: 'run.ended',
          status: 'cancelled',
          error: null,
          steps: [],
        }),
      ],
      restarted,
    );
    expect(texts(ended, 'map[0]')).toEqual([[1, 'other', true]]);
    expect(lastWriter(ended)).toBe('map[0]');
    expect(lastWriter(NO_LIVE_TEXT)).toBeNull();
  });
});
