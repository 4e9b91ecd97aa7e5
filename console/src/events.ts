/**
 * Follows a run's Server-Sent Events with fetch() and a ReadableStream — EventSource cannot send the Authorization
 * header. After a drop (network, proxy, the server's stream time limit) it reconnects with `Last-Event-ID` and gets
 * exactly the events after the last one seen; `run.ended` is always last and ends the follow.
 */
import { authHeaders, failure, type RunEvent } from './api';

export type { RunEvent };

export interface FollowHandlers {
  /** Every event, an agent's live text (agent.text.delta / agent.text.void) included. */
  onEvent: (event: RunEvent) => void;
  /** Connected (true) or waiting to reconnect (false). */
  onConnection?: (connected: boolean) => void;
  /** A refusal that reconnecting cannot fix (404, 400…); 401 also signs out. */
  onError?: (message: string) => void;
}

const MAX_BACKOFF_MS = 15_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const id = window.setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      window.clearTimeout(id);
      resolve();
    });
  });
}

/** Runs until `run.ended` or the signal aborts. */
export async function followRun(runId: string, handlers: FollowHandlers, signal: AbortSignal): Promise<void> {
  let lastId = 0;
  let retryMs = 1000;
  let failures = 0;
  while (!signal.aborted) {
    let ended = false;
    try {
      const headers = authHeaders({ Accept: 'text/event-stream' });
      if (lastId > 0) headers['Last-Event-ID'] = String(lastId);
      const res = await fetch(`/api/v1/workflows/runs/${encodeURIComponent(runId)}/events`, {
        headers,
        signal,
        cache: 'no-store',
      });
      if (!res.ok) {
        const err = await failure(res);
        // Too many open streams (429) or a server hiccup (5xx): try again later; anything else is final.
        if (res.status !== 429 && res.status < 500) {
          handlers.onError?.(err.message);
          return;
        }
        throw err;
      }
      if (!res.body) throw new Error('no response body');
      handlers.onConnection?.(true);
      failures = 0;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        // Frames end with a blank line; the spec allows \r\n, \r or \n line ends.
        buffer = buffer.replace(/\r\n?/g, '\n');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const parsed = parseFrame(frame);
          if (parsed.retry !== undefined) retryMs = parsed.retry;
          if (parsed.id !== undefined) lastId = parsed.id;
          if (parsed.data === undefined) continue;
          const event = JSON.parse(parsed.data) as RunEvent;
          handlers.onEvent(event);
          if (event.type === 'run.ended') ended = true;
        }
      }
    } catch {
      // A dropped connection or a refused retryable answer: resume after a pause.
      if (signal.aborted) return;
      failures += 1;
    }
    if (ended || signal.aborted) return;
    handlers.onConnection?.(false);
    await sleep(Math.min(retryMs * 2 ** Math.min(failures, 4), MAX_BACKOFF_MS), signal);
  }
}

function parseFrame(frame: string): { id?: number; data?: string; retry?: number } {
  const out: { id?: number; data?: string; retry?: number } = {};
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'id' && /^\d+$/.test(value)) out.id = Number(value);
    else if (field === 'retry' && /^\d+$/.test(value)) out.retry = Number(value);
  }
  if (data.length > 0) out.data = data.join('\n');
  return out;
}
