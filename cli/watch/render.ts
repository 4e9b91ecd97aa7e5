/**
 * `runs watch` output, pure: `eventLine` is the one line per event written when stdout is not a terminal, and
 * `plainText` the same stream with an agent's live text written as it comes; `renderFrame` is the live table and progress bar a terminal shows, and `redraw` the ANSI that replaces the previous
 * frame in place. Time, width and colour are parameters, so tests pin them.
 */
import type { RunEvent } from '../api-client';
import { formatTable } from '../table';
import { cleanText, tailLines } from './live-text';
import { displayStatus, progress, type StepRow, type WatchState } from './state';

const ESC = '\x1b[';

/** `1.2s`, `4m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** What happened, in words, after `<time> <exec id>`. */
function describe(event: RunEvent): string {
  switch (event.type) {
    case 'step.started':
      return event.attempt > 1 ? `started (attempt ${event.attempt})` : 'started';
    case 'step.retrying':
      return `attempt ${event.attempt} failed, retrying: ${event.error.reason}: ${event.error.message}`;
    case 'step.waiting':
      return event.tool_call ? `waiting for approval of ${event.tool_call.name}` : 'waiting for approval';
    case 'step.resumed':
      return `${event.approved ? 'approved' : 'declined'}: ${event.tool_call.name}, running again`;
    case 'step.completed': {
      const extras = [
        event.usage ? `${count(event.usage.input_tokens + event.usage.output_tokens)} tokens` : null,
        event.output_ref ? `output of ${count(event.output_ref.bytes)} bytes stored by reference` : null,
        event.reused_from_run_id ? `reused from ${event.reused_from_run_id}` : null,
      ].filter((x) => x !== null);
      return extras.length ? `completed (${extras.join(', ')})` : 'completed';
    }
    case 'step.failed':
      return `failed: ${event.error.reason}: ${event.error.message}`;
    case 'step.skipped':
      return `skipped: ${event.reason}`;
    case 'step.child_run':
      return `started child run ${event.child_run_id}`;
    case 'step.warning':
      return `warning: ${event.problems.join('; ')}`;
    case 'agent.model_call':
      return (
        `turn ${event.turn}: model call, ${count(event.usage.input_tokens)} in / ` +
        `${count(event.usage.output_tokens)} out tokens, ${event.tool_calls} tool call${event.tool_calls === 1 ? '' : 's'}`
      );
    case 'agent.tool_call':
      return `turn ${event.turn}: tool ${event.tool} ${event.ok ? 'ok' : 'failed'}: ${event.summary}`;
    case 'agent.text.delta':
      // The text as it comes (plainText writes the next deltas of the turn after it, on the same line).
      return `turn ${event.turn}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}: ${cleanText(event.text)}`;
    case 'agent.text.void':
      return `turn ${event.turn}: the partial text of attempt ${event.attempt - 1} is discarded; attempt ${event.attempt} follows`;
    case 'run.ended':
      // After the `run` column: `run completed`, `run failed: <why>`.
      return event.error?.message ? `${event.status}: ${event.error.message}` : event.status;
  }
}

/** `<time> <exec id> <what happened>`; run-level events use `run` as the id. */
export function eventLine(event: RunEvent): string {
  return `${event.at} ${event.type === 'run.ended' ? 'run' : event.exec_id} ${describe(event)}`;
}

/** The turn whose text is being written on the current line, if any. */
export interface OpenText {
  execId: string;
  turn: number;
  attempt: number;
}

/**
 * What to write for one event when stdout is not a terminal, and the turn left open. A delta of the open turn is
 * its text only; any other output first ends the open line, so every event line starts at the start of a line.
 */
export function plainText(open: OpenText | null, event: RunEvent): { open: OpenText | null; write: string } {
  const close = open ? '\n' : '';
  if (event.type !== 'agent.text.delta') return { open: null, write: `${close}${eventLine(event)}\n` };
  if (open?.execId === event.exec_id && open.turn === event.turn && open.attempt === event.attempt) {
    return { open, write: cleanText(event.text) };
  }
  return {
    open: { execId: event.exec_id, turn: event.turn, attempt: event.attempt },
    write: `${close}${eventLine(event)}`,
  };
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${done}/${total} steps`;
}

const COLOURS: Record<string, string> = {
  completed: '32', // green
  failed: '31', // red
  cancelled: '31',
  timed_out: '31',
  running: '36', // cyan
  retrying: '33', // yellow
  waiting: '33',
  skipped: '2', // dim
  pending: '2',
  queued: '2',
};

export interface FrameOptions {
  /** Epoch ms: the clock running steps' durations are measured against. */
  now: number;
  /** Terminal columns: longer lines are cut, so each row stays one line and the redraw stays exact. */
  columns: number;
  /** Terminal rows: item rows beyond what fits are summarised. */
  rows: number;
  colour: boolean;
}

/** Items shown per map or loop step: the unfinished ones first; the rest are counted. */
const ITEMS_SHOWN = 5;

function visibleRows(rows: StepRow[], budget: number): { shown: StepRow[]; hidden: number } {
  const steps = rows.filter((r) => !r.item);
  const active = rows.filter((r) => r.item && !['completed', 'skipped'].includes(r.status));
  const room = Math.max(0, budget - steps.length);
  const perStep = new Map<string, number>();
  const keep = new Set<StepRow>();
  for (const r of active) {
    const n = perStep.get(r.stepId) ?? 0;
    if (n >= ITEMS_SHOWN || keep.size >= room) continue;
    perStep.set(r.stepId, n + 1);
    keep.add(r);
  }
  const shown = rows.filter((r) => !r.item || keep.has(r));
  return { shown, hidden: rows.length - shown.length };
}

function itemSummary(rows: StepRow[], stepId: string): string {
  const counts = new Map<string, number>();
  for (const r of rows) if (r.item && r.stepId === stepId) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
}

/** Lines of an agent's live text shown under its row (plus one for a discarded attempt). */
const LIVE_LINES = 2;
const LIVE_INDENT = '    │ ';

/** The lines under a row while its model call writes: a discarded attempt, then the newest text. */
function liveLines(row: StepRow, columns: number): string[] {
  if (!row.live) return [];
  const lines: string[] = [];
  if (row.live.voided !== null) {
    lines.push(`${LIVE_INDENT}(attempt ${row.live.voided}'s partial text discarded; attempt ${row.live.attempt}:)`);
  }
  if (row.live.text) {
    lines.push(...tailLines(row.live.text, columns - LIVE_INDENT.length, LIVE_LINES).map((l) => LIVE_INDENT + l));
  }
  return lines;
}

/**
 * The live view: title, progress bar, then a table of the steps (status, attempts, tokens, duration, note), with the
 * last lines of a running agent's text under its row.
 */
export function renderFrame(state: WatchState, opts: FrameOptions): string[] {
  const status = displayStatus(state);
  const paint = (text: string, key: string) => {
    const code = COLOURS[key];
    return opts.colour && code ? `${ESC}${code}m${text}${ESC}0m` : text;
  };
  const { done, total } = progress(state);
  const tokens = state.rows.filter((r) => !r.item).reduce((sum, r) => sum + r.tokens, 0);
  const live = new Map(state.rows.map((r) => [r, liveLines(r, opts.columns)]));
  const liveCount = [...live.values()].reduce((sum, l) => sum + l.length, 0);
  // Title, bar, blank, header, the "more items" line, and one left free for a note or the shell prompt.
  const { shown, hidden } = visibleRows(state.rows, opts.rows - 6 - liveCount);
  const table = formatTable(
    ['STEP', 'STATUS', 'ATTEMPTS', 'TOKENS', 'DURATION', 'NOTE'],
    shown.map((r) => {
      const duration = r.startedAt === null ? '' : formatDuration((r.endedAt ?? opts.now) - r.startedAt);
      const items = r.item ? '' : itemSummary(state.rows, r.stepId);
      return [
        r.item ? `  ${r.execId}` : r.execId,
        r.status,
        r.attempts ? String(r.attempts) : '',
        r.tokens ? count(r.tokens) : '',
        duration,
        [items && `items: ${items}`, r.note].filter(Boolean).join(' · '),
      ];
    }),
  );
  // Each line with the row it shows, if it is a row's line: its status is coloured after the layout (escape codes
  // would otherwise count as width).
  const lines: { text: string; row?: StepRow }[] = [
    { text: `${state.runId}  ${state.workflowName}  ${status}` },
    { text: `${progressBar(done, total)}  ·  ${count(tokens)} tokens` },
    { text: '' },
    { text: table[0] ?? '' },
  ];
  shown.forEach((row, i) => {
    lines.push({ text: table[i + 1] ?? '', row });
    for (const text of live.get(row) ?? []) lines.push({ text });
  });
  if (hidden > 0)
    lines.push({ text: `  … ${hidden} more item${hidden === 1 ? '' : 's'} (counted on their step's line)` });
  return lines.map(({ text: line, row }, i) => {
    const cut = line.length > opts.columns ? `${line.slice(0, Math.max(0, opts.columns - 1))}…` : line;
    if (i === 0) return cut.replace(new RegExp(`${status}$`), paint(status, status));
    if (!row) return cut;
    const col = cut.indexOf(row.status, row.execId.length + (row.item ? 2 : 0));
    return col === -1 ? cut : cut.slice(0, col) + paint(row.status, row.status) + cut.slice(col + row.status.length);
  });
}

/** ANSI that moves up over the previous frame (`previousLines` tall), rewrites it, and clears what is left below. */
export function redraw(previousLines: number, lines: string[]): string {
  const up = previousLines > 0 ? `${ESC}${previousLines}F` : '';
  return `${up}${lines.map((l) => `${ESC}2K${l}`).join('\n')}\n${ESC}J`;
}
