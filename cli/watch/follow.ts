/**
 * `runs watch`: follows a run's event stream until `run.ended` and shows it — a live table redrawn in place on a
 * terminal (a running agent's newest text under its row), plain lines otherwise (one per event, an agent's text
 * written as it comes), one JSON object per line with --json. Returns the run's end.
 */
import { RUN_EVENT_TYPES } from '../../client/values';
import type { ApiClient, RunEvent, RunStatus } from '../api-client';
import type { CliOutput } from '../context';
import { CliError } from '../errors';
import { followEventStream, type ReconnectNotice, type SseMessage } from '../sse';
import { plainText, redraw, renderFrame, type OpenText } from './render';
import { applyEvent, initialWatchState, type WatchState } from './state';

export interface WatchOptions {
  json: boolean;
}

/**
 * The stream's messages as events; types newer than this CLI come back as null (shown raw or skipped). The data is
 * the document's RunEvent as the server sends it: not parsed again here (docs/decisions/0302).
 */
function parse(message: SseMessage): { event: RunEvent | null; raw: unknown } {
  let raw: unknown;
  try {
    raw = JSON.parse(message.data);
  } catch {
    throw new CliError(`the event stream sent data that is not JSON (event id ${message.id ?? 'none'})`);
  }
  if (!(RUN_EVENT_TYPES as string[]).includes(message.event)) return { event: null, raw };
  return { event: raw as RunEvent, raw };
}

/**
 * Raw text to stdout; without a raw writer (output collected as lines) the text is passed on a line at a time, the
 * unfinished line when the stream ends.
 */
function plainWriter(io: CliOutput): { write(text: string): void; end(): void } {
  const raw = io.write?.bind(io);
  if (raw) return { write: raw, end: () => undefined };
  let pending = '';
  return {
    write(text) {
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) io.out(line);
    },
    end() {
      if (pending) io.out(pending);
      pending = '';
    },
  };
}

/** Redraws at most this often; a ticker redraws each second so running steps' durations move. */
const FRAME_MS = 100;
const TICK_MS = 1000;

/** A terminal's live view: the frame is redrawn in place; a note (a dropped connection) sits under it. */
function liveView(terminal: NonNullable<CliOutput['terminal']>, initial: WatchState) {
  let state = initial;
  let note = '';
  let height = 0;
  let drawnAt = 0;
  const draw = () => {
    const lines = renderFrame(state, { now: Date.now(), columns: terminal.columns, rows: terminal.rows, colour: true });
    if (note) lines.push(note.slice(0, terminal.columns));
    terminal.write(redraw(height, lines));
    height = lines.length;
    drawnAt = Date.now();
  };
  const ticker = setInterval(draw, TICK_MS);
  // An update inside a frame is drawn at the frame's end: the last delta of a burst shows without waiting a tick.
  let pending: NodeJS.Timeout | undefined;
  draw();
  return {
    update(next: WatchState) {
      state = next;
      note = '';
      const wait = drawnAt + FRAME_MS - Date.now();
      if (wait <= 0) draw();
      else
        pending ??= setTimeout(() => {
          pending = undefined;
          draw();
        }, wait);
    },
    notice(text: string) {
      note = text;
      draw();
    },
    stop() {
      clearInterval(ticker);
      clearTimeout(pending);
      draw();
    },
  };
}

function reconnectText(n: ReconnectNotice): string {
  const after = n.lastEventId === null ? '' : ` after event ${n.lastEventId}`;
  return `connection lost (${n.reason}); resuming${after} in ${(n.delayMs / 1000).toFixed(1)} s`;
}

export async function watchRun(
  client: ApiClient,
  io: CliOutput,
  runId: string,
  opts: WatchOptions,
): Promise<{ status: RunStatus; message: string | null }> {
  const terminal = opts.json ? undefined : io.terminal;
  // The live table needs the step list up front; the events then name only what changes.
  let state = terminal ? initialWatchState(await client.runStatus(runId)) : null;
  const view = terminal && state ? liveView(terminal, state) : null;
  const url = client.eventsUrl(runId);
  let end: { status: RunStatus; message: string | null } | null = null;
  const plain = plainWriter(io);
  let open: OpenText | null = null;
  try {
    const messages = followEventStream({
      open: (lastEventId, signal) =>
        client.send('GET', url, {
          headers: { Accept: 'text/event-stream', ...(lastEventId === null ? {} : { 'Last-Event-ID': lastEventId }) },
          signal,
        }),
      refusal: (res) => client.failure(res, 'GET', url),
      isLast: (m) => m.event === 'run.ended',
      onReconnect: (n) => (view ? view.notice(reconnectText(n)) : io.err(reconnectText(n))),
    });
    for await (const message of messages) {
      const { event, raw } = parse(message);
      if (opts.json) io.out(JSON.stringify(raw));
      else if (!event) {
        if (!view) plain.write(`${new Date().toISOString()} - ${message.event} (not known to this CLI)\n`);
      } else if (view && state) {
        state = applyEvent(state, event);
        view.update(state);
      } else {
        const next = plainText(open, event);
        open = next.open;
        plain.write(next.write);
      }
      if (event?.type === 'run.ended') end = { status: event.status, message: event.error?.message ?? null };
    }
  } finally {
    view?.stop();
    plain.end();
  }
  if (!end) throw new CliError('the event stream ended without the run’s end');
  return end;
}
