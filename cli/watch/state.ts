/**
 * What `runs watch` knows about a run: one row per graph step (from the status body), plus rows for the map items
 * and loop iterations the events name, folded from the event stream by `applyEvent`. Pure: the same events give the
 * same state, so the renderer and its tests need no server.
 */
import type { RunEvent, RunStatus, RunStatusBody, TextDeltaEvent } from '../api-client';

export interface StepRow {
  /** `step`, `step[i]` (map item) or `step#n` (loop iteration). */
  execId: string;
  stepId: string;
  /** A map item or loop iteration rather than a graph step. */
  item: boolean;
  /** The step statuses of the API, plus `retrying` between a failed attempt and the next. */
  status: string;
  attempts: number;
  tokens: number;
  /** Epoch ms. */
  startedAt: number | null;
  endedAt: number | null;
  /** The latest thing worth a glance: a tool call, an error, a skip reason. */
  note: string;
  /** The text of the model call in progress, from agent.text.delta events; null once the call ends. */
  live: LiveText | null;
}

export interface LiveText {
  turn: number;
  attempt: number;
  /** The tail of the text so far: a terminal shows its last lines only (LIVE_TEXT_KEPT). */
  text: string;
  /** The attempt whose partial text was discarded (agent.text.void), while its retry writes. */
  voided: number | null;
}

/**
 * Characters of live text a row keeps: more than a tall terminal's last lines need, so a 100 000-character answer
 * costs the watch no more than a short one.
 */
export const LIVE_TEXT_KEPT = 4000;

export interface WatchState {
  runId: string;
  workflowName: string;
  /** The run status when the watch began (the end's once it ends); `displayStatus` derives the live one. */
  status: RunStatus;
  rows: StepRow[];
  ended: { status: RunStatus; message: string | null } | null;
  lastSeq: number;
}

const time = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/** The fields of the status body a watch starts from. */
export type WatchStart = Pick<RunStatusBody, 'run_id' | 'workflow_name' | 'status'> & {
  steps: Pick<RunStatusBody['steps'][number], 'id' | 'status' | 'attempts' | 'usage' | 'started_at' | 'completed_at'>[];
};

export function initialWatchState(run: WatchStart): WatchState {
  return {
    runId: run.run_id,
    workflowName: run.workflow_name,
    status: run.status,
    rows: run.steps.map((s) => ({
      execId: s.id,
      stepId: s.id,
      item: false,
      status: s.status,
      attempts: s.attempts,
      tokens: s.usage.input_tokens + s.usage.output_tokens,
      startedAt: time(s.started_at),
      endedAt: time(s.completed_at),
      note: '',
      live: null,
    })),
    ended: null,
    lastSeq: 0,
  };
}

/** The row of `execId`, created after its step's rows when the events name it first (items, iterations). */
function withRow(rows: StepRow[], execId: string, stepId: string, change: (row: StepRow) => StepRow): StepRow[] {
  const at = rows.findIndex((r) => r.execId === execId);
  if (at !== -1) return rows.map((r, i) => (i === at ? change(r) : r));
  const fresh: StepRow = {
    execId,
    stepId,
    item: execId !== stepId,
    status: 'pending',
    attempts: 0,
    tokens: 0,
    startedAt: null,
    endedAt: null,
    note: '',
    live: null,
  };
  let insertAt = rows.length;
  for (let i = rows.length - 1; i >= 0; i--) {
    if (rows[i]?.stepId === stepId) {
      insertAt = i + 1;
      break;
    }
  }
  return [...rows.slice(0, insertAt), change(fresh), ...rows.slice(insertAt)];
}

function ended(event: { at: string }): number | null {
  return time(event.at);
}

/** An event of a turn or attempt older than the one the row shows. */
function isStale(live: LiveText | null, event: { turn: number; attempt: number }): boolean {
  return live !== null && (event.turn < live.turn || (event.turn === live.turn && event.attempt < live.attempt));
}

/**
 * A delta appended to the row's live text. A delta of a later turn or attempt starts a new text (its void may have
 * been missed by a watch that joined late); one of an earlier turn or attempt is stale and changes nothing.
 */
function appendText(live: LiveText | null, event: TextDeltaEvent): LiveText | null {
  if (isStale(live, event)) return live;
  const same = live?.turn === event.turn && live.attempt === event.attempt;
  const text = (same ? live.text : '') + event.text;
  return {
    turn: event.turn,
    attempt: event.attempt,
    text: text.length > LIVE_TEXT_KEPT ? text.slice(-LIVE_TEXT_KEPT) : text,
    voided: live?.turn === event.turn ? live.voided : null,
  };
}

/**
 * The state after one event. Events come in seq order; one at or below `lastSeq` is a repeat (a stream resumed from
 * an older Last-Event-ID) and is dropped, so no text is ever appended twice.
 */
export function applyEvent(state: WatchState, event: RunEvent): WatchState {
  if (event.seq <= state.lastSeq) return state;
  const next = { ...state, lastSeq: event.seq };
  switch (event.type) {
    case 'agent.text.delta':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({ ...r, live: appendText(r.live, event) })),
      };
    case 'agent.text.void':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: isStale(r.live, event)
            ? r.live
            : { turn: event.turn, attempt: event.attempt, text: '', voided: event.attempt - 1 },
        })),
      };
    case 'run.ended': {
      const finals = new Map(event.steps.map((s) => [s.id, s.status]));
      return {
        ...next,
        status: event.status,
        ended: { status: event.status, message: event.error?.message ?? null },
        rows: state.rows.map((r) =>
          r.item ? { ...r, live: null } : { ...r, live: null, status: finals.get(r.execId) ?? r.status },
        ),
      };
    }
    case 'step.started':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: null,
          status: 'running',
          attempts: Math.max(r.attempts, event.attempt),
          startedAt: r.startedAt ?? time(event.at),
          endedAt: null,
        })),
      };
    case 'step.retrying':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: null,
          status: 'retrying',
          attempts: Math.max(r.attempts, event.attempt),
          note: `attempt ${event.attempt} failed: ${event.error.message}`,
        })),
      };
    case 'step.waiting':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          status: 'waiting',
          // An approval has no step.started: its wait is its run time, from the moment it began waiting.
          startedAt: r.startedAt ?? time(event.at),
          note: event.tool_call ? `waiting for approval of ${event.tool_call.name}` : 'waiting for approval',
        })),
      };
    case 'step.resumed':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          status: 'running',
          note: `${event.tool_call.name} ${event.approved ? 'approved' : 'declined'}`,
        })),
      };
    case 'step.completed':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: null,
          status: 'completed',
          // The step's own total wins over the sum of the turns seen (a watch may have joined mid-step).
          tokens: event.usage ? event.usage.input_tokens + event.usage.output_tokens : r.tokens,
          startedAt: r.startedAt ?? time(event.at),
          endedAt: ended(event),
          note: event.reused_from_run_id ? `reused from ${event.reused_from_run_id}` : '',
        })),
      };
    case 'step.failed':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: null,
          status: 'failed',
          endedAt: ended(event),
          note: `${event.error.reason}: ${event.error.message}`,
        })),
      };
    case 'step.skipped':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          live: null,
          status: 'skipped',
          note: event.reason,
        })),
      };
    case 'step.child_run':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          note: `child run ${event.child_run_id}`,
        })),
      };
    case 'step.warning':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({ ...r, note: event.problems.join('; ') })),
      };
    case 'agent.model_call':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          tokens: r.tokens + event.usage.input_tokens + event.usage.output_tokens,
          // The call ended: its text is final in the transcript; the live view of it is done.
          live: r.live && r.live.turn <= event.turn ? null : r.live,
          note: `turn ${event.turn}: model call, ${event.tool_calls} tool call${event.tool_calls === 1 ? '' : 's'}`,
        })),
      };
    case 'agent.tool_call':
      return {
        ...next,
        rows: withRow(state.rows, event.exec_id, event.step_id, (r) => ({
          ...r,
          note: `turn ${event.turn}: ${event.tool} ${event.ok ? 'ok' : 'failed'}: ${event.summary}`,
        })),
      };
  }
}

const DONE = new Set(['completed', 'failed', 'skipped']);

/** Graph steps that have finished, of all graph steps (items count inside their step). */
export function progress(state: WatchState): { done: number; total: number } {
  const steps = state.rows.filter((r) => !r.item);
  return { done: steps.filter((r) => DONE.has(r.status)).length, total: steps.length };
}

/** The run status to show: the end's, else derived from the rows as the API derives it (waiting wins over running). */
export function displayStatus(state: WatchState): RunStatus {
  if (state.ended) return state.ended.status;
  if (state.rows.some((r) => r.status === 'waiting')) return 'waiting';
  if (state.rows.some((r) => r.status === 'running' || r.status === 'retrying')) return 'running';
  return state.status === 'waiting' ? 'running' : state.status;
}
