/**
 * A Server-Sent Events client for tests: reads a stream over a real socket, parses its frames, and can stop after a
 * number of events (to test resuming with Last-Event-ID).
 */
import http from 'node:http';

export interface SseEvent {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
}

export interface SseResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: string[];
  /** The body when the server answered without a stream (an error envelope). */
  body: string;
  /** True when the server ended the stream; false when the client stopped (`stopAfter`). */
  endedByServer: boolean;
}

export interface SseOptions {
  headers?: Record<string, string>;
  /** Disconnect after this many events. */
  stopAfter?: number;
  /** Disconnect after the first event this accepts. */
  stopWhen?: (e: SseEvent) => boolean;
  /** Disconnect after this many comment lines (heartbeats). */
  stopAfterComments?: number;
  /** Called once the response headers have arrived (the stream is open, or the refusal is known). */
  onOpen?: (status: number) => void;
  /** Called for each event as it arrives. */
  onEvent?: (e: SseEvent) => void;
  timeoutMs?: number;
}

export function readSse(url: string, opts: SseOptions = {}): Promise<SseResult> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...opts.headers } }, (res) => {
      const result: SseResult = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        body: '',
        endedByServer: false,
      };
      opts.onOpen?.(result.status);
      const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      let buffer = '';
      let done = false;
      const finish = (byServer: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        result.endedByServer = byServer;
        resolve(result);
      };
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`SSE ${url}: no end within ${opts.timeoutMs ?? 60_000} ms; got ${result.events.length}`));
      }, opts.timeoutMs ?? 60_000);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!streaming) {
          result.body += chunk;
          return;
        }
        buffer += chunk;
        let cut: number;
        while (!done && (cut = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const parsed = parseFrame(frame);
          if (parsed.comment !== undefined) {
            result.comments.push(parsed.comment);
            if (opts.stopAfterComments !== undefined && result.comments.length >= opts.stopAfterComments) {
              finish(false);
              req.destroy();
            }
          }
          if (parsed.event) {
            result.events.push(parsed.event);
            opts.onEvent?.(parsed.event);
            const enough = opts.stopAfter !== undefined && result.events.length >= opts.stopAfter;
            if (enough || opts.stopWhen?.(parsed.event)) {
              finish(false);
              req.destroy();
            }
          }
        }
      });
      res.on('end', () => finish(true));
      res.on('error', () => finish(false));
    });
    req.on('error', (err) => reject(err));
  });
}

function parseFrame(frame: string): { event?: SseEvent; comment?: string } {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  let comment: string | undefined;
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('event: ')) event = line.slice(7);
    else if (line.startsWith('data: ')) data.push(line.slice(6));
  }
  if (data.length === 0) return { comment };
  return { event: { id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> }, comment };
}
