/**
 * A stand-in for the Stepwise API on a free 127.0.0.1 port, for CLI tests: each route is a handler that answers as
 * the contract documents (envelopes, `Link` paging, `X-Error-Code`, SSE frames, a connection dropped mid-stream).
 * Every request is recorded with its headers and parsed body, so tests assert what the CLI sent.
 */
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** Answers one request; `n` counts the requests this route has had before (0 for the first). */
export type FakeHandler = (req: FakeRequest, res: ServerResponse, n: number) => void | Promise<void>;

export interface FakeApi {
  /** `http://127.0.0.1:<port>` (what --url / STEPWISE_URL take). */
  url: string;
  readonly requests: FakeRequest[];
  requestsTo(method: string, pathname: string): FakeRequest[];
  close(): Promise<void>;
}

export function sendData(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ data, error: null }));
}

export function sendError(res: ServerResponse, status: number, code: string, message: string) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Error-Code': code });
  res.end(JSON.stringify({ data: null, error: message }));
}

/** One SSE frame as the API writes it: `id`, `event`, then the event's JSON (seq and type included). */
export function sseFrame(event: { seq: number; type: string }): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export function startSse(res: ServerResponse, retryMs = 10): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(`retry: ${retryMs}\n\n`);
}

/** Routes are `"<METHOD> <pathname>"`; anything else answers the API's 404 envelope. */
export async function startFakeApi(routes: Record<string, FakeHandler>): Promise<FakeApi> {
  const requests: FakeRequest[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: FakeRequest = {
        method: req.method ?? 'GET',
        pathname: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(recorded);
      const key = `${recorded.method} ${recorded.pathname}`;
      const handler = routes[key];
      if (!handler) return sendError(res, 404, 'not_found', `no route ${key}`);
      const n = counts.get(key) ?? 0;
      counts.set(key, n + 1);
      Promise.resolve(handler(recorded, res, n)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo: (method, pathname) => requests.filter((r) => r.method === method && r.pathname === pathname),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
