/**
 * `runs watch` and an agent's live text: the fold (agent.text.delta appends, agent.text.void discards, a resumed
 * stream never appends twice), the lines the live table shows under the step's row, and the plain output.
 */
import type { RunEvent, TextDeltaEvent, TextVoidEvent } from '../../cli/api-client';
import { cleanText, tailLines } from '../../cli/watch/live-text';
import { plainText, renderFrame, type OpenText } from '../../cli/watch/render';
import { applyEvent, initialWatchState, LIVE_TEXT_KEPT, type WatchState } from '../../cli/watch/state';
import { documentedEvent } from '../helpers/run-event-doc';
import { RUN_ID, statusBody } from './run-fixture';

const at = (seq: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, seq)).toISOString();
const step = { run_id: RUN_ID, exec_id: 'draft', step_id: 'draft' };
const delta = (seq: number, turn: number, attempt: number, text: string): TextDeltaEvent =>
  documentedEvent({ ...step, seq, at: at(seq), type: 'agent.text.delta', turn, attempt, text });
const voided = (seq: number, turn: number, attempt: number): TextVoidEvent =>
  documentedEvent({ ...step, seq, at: at(seq), type: 'agent.text.void', turn, attempt });
const started = (seq: number): RunEvent =>
  documentedEvent({ ...step, seq, at: at(seq), type: 'step.started', attempt: 1 });
const modelCall = (seq: number, turn: number): RunEvent =>
  documentedEvent({
    ...step,
    seq,
    at: at(seq),
    type: 'agent.model_call',
    turn,
    usage: { input_tokens: 10, output_tokens: 5 },
    tool_calls: 0,
  });

const fold = (list: RunEvent[], state: WatchState = initialWatchState(statusBody('running'))) =>
  list.reduce(applyEvent, state);
const draft = (state: WatchState) => state.rows.find((r) => r.execId === 'draft')!;
const frameOpts = { now: Date.UTC(2026, 0, 2, 3, 5, 0), columns: 60, rows: 40, colour: false };

describe('runs watch: the live text folded from events', () => {
  it('appends the deltas of a turn, starts a new text for the next turn, and drops it when the call ends', () => {
    const writing = fold([started(1), delta(2, 1, 1, 'Once upon'), delta(3, 1, 1, ' a time')]);
    expect(draft(writing).live).toEqual({ turn: 1, attempt: 1, text: 'Once upon a time', voided: null });

    const ended = fold([modelCall(4, 1)], writing);
    expect(draft(ended).live).toBeNull();
    expect(draft(ended).note).toBe('turn 1: model call, 0 tool calls');

    const next = fold([delta(5, 2, 1, 'The end')], ended);
    expect(draft(next).live).toEqual({ turn: 2, attempt: 1, text: 'The end', voided: null });
    // A step that ends ends its text too (a failed call has no agent.model_call).
    expect(
      draft(
        fold(
          [documentedEvent({ ...step, seq: 6, at: at(6), type: 'step.failed', error: { reason: 'x', message: 'y' } })],
          next,
        ),
      ).live,
    ).toBeNull();
  });

  it('discards the partial text on void and shows the retry’s text alone, ignoring a late delta of the old attempt', () => {
    const state = fold([
      started(1),
      delta(2, 1, 1, 'Half an ans'),
      voided(3, 1, 2),
      delta(4, 1, 2, 'A whole'),
      delta(5, 1, 1, 'wer'),
      delta(6, 1, 2, ' answer.'),
    ]);
    expect(draft(state).live).toEqual({ turn: 1, attempt: 2, text: 'A whole answer.', voided: 1 });
    expect(state.lastSeq).toBe(6);
  });

  it('starts over on a delta of a newer attempt when the void was missed (a watch that joined late)', () => {
    const state = fold([delta(2, 1, 1, 'old'), delta(9, 1, 2, 'new')]);
    expect(draft(state).live).toMatchObject({ attempt: 2, text: 'new' });
  });

  it('never appends twice: a resumed stream that repeats events changes nothing', () => {
    const events = [started(1), delta(2, 1, 1, 'Hel'), delta(3, 1, 1, 'lo'), delta(4, 1, 1, ' world')];
    const once = fold(events);
    expect(draft(once).live).toMatchObject({ text: 'Hello world' });
    // The connection dropped after seq 3; a resume from an older Last-Event-ID sends 2 and 3 again.
    const resumed = fold([...events.slice(0, 3), ...events.slice(1)]);
    expect(resumed).toEqual(once);
    expect(resumed.lastSeq).toBe(4);
  });

  it('keeps only the tail of a long text', () => {
    const chunk = 'x'.repeat(999) + '\n';
    const events = Array.from({ length: 100 }, (_, i) => delta(i + 1, 1, 1, i === 99 ? 'the newest' : chunk));
    const live = draft(fold(events)).live!;
    expect(live.text).toHaveLength(LIVE_TEXT_KEPT);
    expect(live.text.endsWith('\nthe newest')).toBe(true);
  });
});

describe('runs watch: the live text on a terminal', () => {
  it('shows the last lines of the text under the step’s row, within the width', () => {
    const third = 'Third line, which is long enough to wrap at fifty-four columns';
    const lines = renderFrame(fold([started(1), delta(2, 1, 1, `First line\nSecond line\n${third}`)]), frameOpts);
    const row = lines.findIndex((l) => l.startsWith('draft'));
    // 60 columns less the 6 of the indent: the third line wraps, and its two pieces are the newest text.
    expect(lines.slice(row + 1, row + 3)).toEqual([`    │ ${third.slice(0, 54)}`, `    │ ${third.slice(54)}`]);
    expect(lines[row + 3]).toMatch(/^notify/);
    expect(lines.every((l) => l.length <= 60)).toBe(true);
    // The call ended: the row is a row again.
    expect(renderFrame(fold([modelCall(3, 1)], fold([started(1), delta(2, 1, 1, third)])), frameOpts)).toHaveLength(
      lines.length - 2,
    );
  });

  it('says that a discarded attempt’s text is gone, then shows the retry’s', () => {
    const lines = renderFrame(fold([started(1), delta(2, 1, 1, 'old'), voided(3, 1, 2), delta(4, 1, 2, 'new')]), {
      ...frameOpts,
      columns: 100,
    });
    const at = lines.findIndex((l) => l.startsWith('draft'));
    expect(lines.slice(at + 1, at + 3)).toEqual([
      "    │ (attempt 1's partial text discarded; attempt 2:)",
      '    │ new',
    ]);
    expect(lines.join('\n')).not.toContain('old');
  });

  it('drops control characters, so a model’s text cannot move the cursor', () => {
    expect(cleanText('a\x1b[2Jb\tc\r\nd\x07')).toBe('a[2Jb c\nd');
    const lines = renderFrame(fold([started(1), delta(2, 1, 1, 'red \x1b[31mtext')]), frameOpts);
    expect(lines.join('\n')).not.toContain('\x1b');
  });

  it('wraps from the end: the newest characters are always on the last line', () => {
    expect(tailLines('abcdefgh', 3, 2)).toEqual(['def', 'gh']);
    expect(tailLines('one\ntwo\n', 10, 2)).toEqual(['two', '']);
    expect(tailLines('ab\ncdefg', 3, 5)).toEqual(['ab', 'cde', 'fg']);
  });
});

describe('runs watch: the live text as plain output', () => {
  const write = (events: RunEvent[]) => {
    let open: OpenText | null = null;
    let out = '';
    for (const e of events) {
      const next = plainText(open, e);
      open = next.open;
      out += next.write;
    }
    return out;
  };

  it('writes the text as it comes after one prefix per turn, and ends the line before the next event', () => {
    expect(
      write([started(1), delta(2, 1, 1, 'Once'), delta(3, 1, 1, ' upon'), modelCall(4, 1), delta(5, 2, 1, 'End')]),
    ).toBe(
      [
        `${at(1)} draft started`,
        `${at(2)} draft turn 1: Once upon`,
        `${at(4)} draft turn 1: model call, 10 in / 5 out tokens, 0 tool calls`,
        `${at(5)} draft turn 2: End`,
      ].join('\n'),
    );
  });

  it('says when an attempt’s partial text is discarded, then writes the retry’s under a new prefix', () => {
    const out = write([delta(1, 1, 1, 'Half \x1b[2J'), voided(2, 1, 2), delta(3, 1, 2, 'Whole'), modelCall(4, 1)]);
    expect(out.split('\n')).toEqual([
      `${at(1)} draft turn 1: Half [2J`,
      `${at(2)} draft turn 1: the partial text of attempt 1 is discarded; attempt 2 follows`,
      `${at(3)} draft turn 1 (attempt 2): Whole`,
      `${at(4)} draft turn 1: model call, 10 in / 5 out tokens, 0 tool calls`,
      '',
    ]);
    expect(out).not.toContain('\x1b');
  });

  it('prefixes again when two steps write at once', () => {
    const other = (seq: number, text: string): TextDeltaEvent =>
      documentedEvent({
        ...delta(seq, 1, 1, text),
        exec_id: 'b',
        step_id: 'b',
      });
    expect(write([delta(1, 1, 1, 'aa'), other(2, 'bb'), delta(3, 1, 1, 'cc')]).split('\n')).toEqual([
      `${at(1)} draft turn 1: aa`,
      `${at(2)} b turn 1: bb`,
      `${at(3)} draft turn 1: cc`,
    ]);
  });
});
