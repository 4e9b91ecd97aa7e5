/* eslint-disable no-control-regex -- these tests read the ANSI escape codes of the live view */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../api/openapi/document';
import type { RunEvent } from '../../cli/api-client';
import { eventLine, formatDuration, progressBar, redraw, renderFrame } from '../../cli/watch/render';
import { applyEvent, displayStatus, initialWatchState, progress, type WatchState } from '../../cli/watch/state';
import { RUN_ID, runEvents, statusBody } from './run-fixture';

// The events are checked against the document's RunEvent, as the server promises to send them: the renderer is tested
// on what the contract allows, not on shapes this test makes up.
const document = buildOpenApiDocument({ PUBLIC_URL: undefined });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const isRunEvent = ajv.compile({ $ref: '#/components/schemas/RunEvent', components: document.components });
const runEvent = {
  parse(value: unknown): RunEvent {
    if (!isRunEvent(value)) throw new Error(`not a documented RunEvent: ${ajv.errorsText(isRunEvent.errors)}`);
    return value as RunEvent;
  },
};
const events = (end: 'completed' | 'failed' = 'completed'): RunEvent[] => runEvents(end).map((e) => runEvent.parse(e));
const start = (): WatchState => initialWatchState(statusBody());
const fold = (list: RunEvent[], state = start()) => list.reduce(applyEvent, state);
const frameOpts = { now: Date.UTC(2026, 0, 2, 3, 4, 10), columns: 200, rows: 40, colour: false };
const row = (state: WatchState, execId: string) => state.rows.find((r) => r.execId === execId);

describe('runs watch: the state folded from events', () => {
  it('tracks status, attempts, tokens and times per step, and the progress of graph steps', () => {
    const all = events();
    const mid = fold(all.slice(0, 6)); // up to the retry of draft
    expect(row(mid, 'fetch')).toMatchObject({ status: 'completed', attempts: 1 });
    expect(row(mid, 'draft')).toMatchObject({
      status: 'retrying',
      attempts: 1,
      tokens: 120,
      note: 'attempt 1 failed: model overloaded',
    });
    expect(progress(mid)).toEqual({ done: 1, total: 3 });
    expect(displayStatus(mid)).toBe('running');

    const done = fold(all);
    // The step's own usage replaces the sum of the turns seen.
    expect(row(done, 'draft')).toMatchObject({ status: 'completed', attempts: 2, tokens: 350 });
    expect(row(done, 'draft')!.endedAt! - row(done, 'draft')!.startedAt!).toBe(10_000);
    expect(progress(done)).toEqual({ done: 3, total: 3 });
    expect(done.ended).toEqual({ status: 'completed', message: null });
    expect(done.lastSeq).toBe(11);
  });

  it('ends with the run.ended statuses and message of a failed run', () => {
    const state = fold(events('failed'));
    expect(state.rows.map((r) => [r.execId, r.status])).toEqual([
      ['fetch', 'completed'],
      ['draft', 'failed'],
      ['notify', 'skipped'],
    ]);
    expect(displayStatus(state)).toBe('failed');
    expect(state.ended?.message).toBe('bad key');
  });

  it('adds map items under their step, and shows waiting while an approval waits', () => {
    const e = (seq: number, type: string, execId: string, extra: object = {}) =>
      runEvent.parse({ seq, type, run_id: RUN_ID, at: new Date(seq * 1000).toISOString(), exec_id: execId, ...extra });
    const state = fold([
      e(1, 'step.started', 'fetch', { step_id: 'fetch', attempt: 1 }),
      e(2, 'step.started', 'draft[1]', { step_id: 'draft', attempt: 1 }),
      e(3, 'step.started', 'draft[0]', { step_id: 'draft', attempt: 1 }),
      e(4, 'step.waiting', 'notify', { step_id: 'notify' }),
    ]);
    expect(state.rows.map((r) => r.execId)).toEqual(['fetch', 'draft', 'draft[1]', 'draft[0]', 'notify']);
    expect(state.rows.filter((r) => r.item).map((r) => r.stepId)).toEqual(['draft', 'draft']);
    // Items are counted inside their step, not as steps.
    expect(progress(state)).toEqual({ done: 0, total: 3 });
    expect(displayStatus(state)).toBe('waiting');
  });

  it('times an approval from the start of its wait (it has no step.started), not from its decision', () => {
    const e = (at: number, type: string, extra: object = {}) =>
      runEvent.parse({
        seq: at,
        type,
        run_id: RUN_ID,
        at: new Date(at * 1000).toISOString(),
        exec_id: 'gate',
        step_id: 'gate',
        ...extra,
      });
    const waiting = fold([e(4, 'step.waiting')]);
    expect(row(waiting, 'gate')?.startedAt).toBe(4000);
    const decided = fold([e(100, 'step.completed', { output: { approved: true } })], waiting);
    const gate = row(decided, 'gate')!;
    expect(formatDuration(gate.endedAt! - gate.startedAt!)).toBe('1m36s');
    expect(renderFrame(decided, frameOpts).join('\n')).toMatch(/gate\s+completed\s+1m36s/);
  });

  it('shows an agent step waiting for each destructive call, and running again after each decision', () => {
    const e = (seq: number, type: string, extra: object = {}) =>
      runEvent.parse({
        seq,
        type,
        run_id: RUN_ID,
        at: new Date(seq * 1000).toISOString(),
        exec_id: 'ask',
        step_id: 'ask',
        ...extra,
      });
    const call = (transcript_seq: number) => ({ transcript_seq, index: 0, name: 'ops__wipe' });
    const waits = [
      e(1, 'step.started', { attempt: 1 }),
      e(2, 'step.waiting', { tool_call: call(1) }),
      e(3, 'step.resumed', { tool_call: call(1), approved: true }),
      e(4, 'step.waiting', { tool_call: call(3) }),
    ];
    const second = fold(waits);
    expect(row(second, 'ask')).toMatchObject({ status: 'waiting', note: 'waiting for approval of ops__wipe' });
    expect(displayStatus(second)).toBe('waiting');
    const resumed = fold([e(5, 'step.resumed', { tool_call: call(3), approved: false })], second);
    expect(row(resumed, 'ask')).toMatchObject({ status: 'running', note: 'ops__wipe declined' });
    expect(displayStatus(resumed)).toBe('running');
    expect(waits.slice(1).map(eventLine)).toEqual([
      '1970-01-01T00:00:02.000Z ask waiting for approval of ops__wipe',
      '1970-01-01T00:00:03.000Z ask approved: ops__wipe, running again',
      '1970-01-01T00:00:04.000Z ask waiting for approval of ops__wipe',
    ]);
  });
});

describe('runs watch: rendering', () => {
  it('draws a title, a progress bar and the step table', () => {
    const lines = renderFrame(fold(events().slice(0, 7)), frameOpts);
    expect(lines[0]).toBe(`${RUN_ID}  Daily digest  running`);
    expect(lines[1]).toBe(`${progressBar(1, 3)}  ·  120 tokens`);
    expect(lines[3]).toMatch(/^STEP\s+STATUS\s+ATTEMPTS\s+TOKENS\s+DURATION\s+NOTE$/);
    expect(lines.slice(4).map((l) => l.split(/\s{2,}/))).toEqual([
      ['fetch', 'completed', '1', '1.0s'],
      // Running: measured against `now` from its first attempt's start.
      ['draft', 'running', '2', '120', '8.0s', 'attempt 1 failed: model overloaded'],
      ['notify', 'pending'],
    ]);
  });

  it('colours statuses without moving columns, and cuts lines to the terminal width', () => {
    const state = fold(events('failed'));
    const plain = renderFrame(state, frameOpts);
    const coloured = renderFrame(state, { ...frameOpts, colour: true });
    expect(coloured.map((l) => l.replace(/\x1b\[\d+m/g, ''))).toEqual(plain);
    expect(coloured[5]).toContain('\x1b[31mfailed\x1b[0m');
    expect(coloured[0]).toMatch(/\x1b\[31mfailed\x1b\[0m$/);

    const narrow = renderFrame(state, { ...frameOpts, columns: 30 });
    expect(narrow.every((l) => l.length <= 30)).toBe(true);
    expect(narrow[5]).toMatch(/…$/);
  });

  it('shows at most a few unfinished items per step and counts the rest', () => {
    let state = start();
    for (let i = 0; i < 40; i++) {
      const base = { run_id: RUN_ID, at: new Date(0).toISOString(), exec_id: `draft[${i}]`, step_id: 'draft' };
      state = applyEvent(state, runEvent.parse({ ...base, seq: 2 * i + 1, type: 'step.started', attempt: 1 }));
      if (i < 30) state = applyEvent(state, runEvent.parse({ ...base, seq: 2 * i + 2, type: 'step.completed' }));
    }
    const lines = renderFrame(state, { ...frameOpts, rows: 14 });
    expect(lines.length).toBeLessThanOrEqual(13);
    expect(lines.filter((l) => l.startsWith('  draft['))).toHaveLength(5);
    expect(lines.find((l) => l.startsWith('draft'))).toContain('items: 30 completed, 10 running');
    expect(lines.at(-1)).toBe("  … 35 more items (counted on their step's line)");
  });

  it('redraws in place: up over the previous frame, each line cleared, the rest of the screen cleared', () => {
    expect(redraw(0, ['a', 'b'])).toBe('\x1b[2Ka\n\x1b[2Kb\n\x1b[J');
    expect(redraw(3, ['a'])).toBe('\x1b[3F\x1b[2Ka\n\x1b[J');
  });

  it('writes one plain line per event: time, exec id, what happened', () => {
    expect(events('failed').map(eventLine)).toEqual([
      '2026-01-02T03:04:00.000Z fetch started',
      '2026-01-02T03:04:01.000Z fetch completed',
      '2026-01-02T03:04:02.000Z draft started',
      '2026-01-02T03:04:04.000Z draft turn 1: model call, 100 in / 20 out tokens, 1 tool call',
      '2026-01-02T03:04:05.000Z draft turn 1: tool http_fetch ok: 200 OK',
      '2026-01-02T03:04:06.000Z draft attempt 1 failed, retrying: llm_unavailable: model overloaded',
      '2026-01-02T03:04:08.000Z draft started (attempt 2)',
      '2026-01-02T03:04:09.000Z draft failed: llm_auth: bad key',
      '2026-01-02T03:04:09.000Z notify skipped: an earlier step failed',
      '2026-01-02T03:04:10.000Z run failed: bad key',
    ]);
    expect(eventLine(events()[7]!)).toBe('2026-01-02T03:04:12.000Z draft completed (350 tokens)');
  });

  it('formats durations and the bar', () => {
    expect([formatDuration(1234), formatDuration(245_000), formatDuration(3_720_000)]).toEqual([
      '1.2s',
      '4m05s',
      '1h02m',
    ]);
    expect(progressBar(1, 4, 8)).toBe('[██░░░░░░] 1/4 steps');
    expect(progressBar(0, 0, 4)).toBe('[████] 0/0 steps');
  });
});
