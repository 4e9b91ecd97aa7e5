/**
 * A real node HTTP server on a free 127.0.0.1 port that records every request and answers from a per-path script:
 * a list of replies used in order (the last one repeats), e.g. `[{status: 503}, {status: 200, body: {ok: true}}]`.
 * Unscripted paths answer 200 `{"ok":true}`.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SinkRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface SinkReply {
  status?: number;
  headers?: Record<string, string>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  /** Redirect: sets status (default 302) and Location. */
  redirect?: string;
  /** Stream this many bytes of 'x' (text/plain) instead of `body`. */
  bytes?: number;
  /** Wait this long before answering (for timeout tests: make it far longer than the client's limit). */
  delayMs?: number;
  /** Never answer (the socket is destroyed on close()). */
  hang?: boolean;
  /** Answer only once this settles (a test decides when the call ends, e.g. after stopping a server). */
  until?: Promise<unknown>;
  /** Send the status, headers and this much of a body, then stall forever (a slow body). */
  stallAfter?: string;
}

export interface HttpSink {
  port: number;
  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** `127.0.0.1:<port>`, for HTTP_ALLOWED_HOSTS. */
  host: string;
  readonly requests: SinkRequest[];
  requestsTo(path: string): SinkRequest[];
  /** Replaces the script of `path` (pathname without query). */
  route(path: string, replies: SinkReply | SinkReply[]): void;
  /** Resolves once `n` requests reached `path` (any path when omitted); rejects after `timeoutMs`. */
  waitForRequests(n: number, path?: string, timeoutMs?: number): Promise<SinkRequest[]>;
  close(): Promise<void>;
}

function pathnameOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export async function startHttpSink(script: Record<string, SinkReply | SinkReply[]> = {}): Promise<HttpSink> {
  const routes = new Map<string, { replies: SinkReply[]; next: number }>();
  const route = (path: string, replies: SinkReply | SinkReply[]): void => {
    routes.set(path, { replies: Array.isArray(replies) ? replies : [replies], next: 0 });
  };
  for (const [path, replies] of Object.entries(script)) route(path, replies);

  const requests: SinkRequest[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const answer = (res: http.ServerResponse, reply: SinkReply): void => {
    if (reply.redirect !== undefined) {
      res.writeHead(reply.status ?? 302, { location: reply.redirect, ...reply.headers });
      res.end();
      return;
    }
    const status = reply.status ?? 200;
    if (reply.bytes !== undefined) {
      res.writeHead(status, { 'content-type': 'text/plain', ...reply.headers });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let left = reply.bytes;
      const pump = (): void => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!res.write(piece)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    let payload: Buffer;
    let type: string;
    if (reply.body === undefined) {
      payload = Buffer.from(status < 300 ? '{"ok":true}' : '{"ok":false}');
      type = 'application/json';
    } else if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) {
      payload = Buffer.from(reply.body);
      type = 'text/plain; charset=utf-8';
    } else {
      payload = Buffer.from(JSON.stringify(reply.body));
      type = 'application/json';
    }
    res.writeHead(status, { 'content-type': type, 'content-length': String(payload.length), ...reply.headers });
    res.end(payload);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, text: body.toString('utf8') });
      waiters.forEach((w) => w());
      const entry = routes.get(pathnameOf(path));
      let reply: SinkReply = {};
      if (entry) {
        reply = entry.replies[Math.min(entry.next, entry.replies.length - 1)] ?? {};
        entry.next++;
      }
      if (reply.hang) return;
      if (reply.stallAfter !== undefined) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.write(reply.stallAfter);
        return;
      }
      if (reply.until !== undefined) {
        const go = (): void => answer(res, { ...reply, until: undefined });
        reply.until.then(go, go);
        return;
      }
      if (reply.delayMs !== undefined) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(res, reply);
        }, reply.delayMs);
        timers.add(timer);
        return;
      }
      answer(res, reply);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const matching = (path?: string): SinkRequest[] =>
    path === undefined ? requests.slice() : requests.filter((r) => pathnameOf(r.path) === path);

  return {
    port,
    host: `127.0.0.1:${port}`,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    requestsTo: (path) => matching(path),
    route,
    waitForRequests(n, path, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const seen = matching(path);
          if (seen.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(seen);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`HTTP sink: expected ${n} request(s) to ${path ?? 'any path'} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      timers.forEach((t) => clearTimeout(t));
      sockets.forEach((s) => s.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
