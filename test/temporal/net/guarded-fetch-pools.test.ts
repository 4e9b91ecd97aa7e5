/**
 * The guarded client's kept-alive connections (temporal/net/pinned-pools.ts) against a real local server: reused for
 * the same checked address, never for another one, and a kept socket the server dropped costs no failed request —
 * except for a request that must not be sent twice (a POST), which fails its attempt instead.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { RetryableError } from '../../../temporal/failures';
import { guardedFetch, type Resolver } from '../../../temporal/net/guarded-fetch';

interface CountingServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Requests answered so far. */
  answered(): number;
  /** Requests received so far, answered or not. */
  received(): number;
  /** Hang up on the next request that arrives on an already used connection, without answering it. */
  dropNextReuse(): void;
  close(): Promise<void>;
}

async function startCountingServer(): Promise<CountingServer> {
  const sockets = new Set<Socket>();
  const used = new WeakSet<Socket>();
  let connections = 0;
  let answered = 0;
  let received = 0;
  let dropReuse = false;
  const server = http.createServer((req, res) => {
    const socket = req.socket;
    received++;
    if (dropReuse && used.has(socket)) {
      dropReuse = false;
      socket.destroy();
      return;
    }
    used.add(socket);
    answered++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    answered: () => answered,
    received: () => received,
    dropNextReuse: () => (dropReuse = true),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let server: CountingServer;
beforeEach(async () => {
  server = await startCountingServer();
});
afterEach(async () => {
  await server.close();
});

/** A GET of `host` (resolved by `resolver`) on the server's port, allowlisted like a user's internal service. */
function get(host: string, resolver: Resolver) {
  return guardedFetch({
    method: 'GET',
    url: `http://${host}:${server.port}/item`,
    timeoutMs: 5000,
    maxBytes: 1 << 20,
    allowedHosts: [`${host}:${server.port}`],
    resolver,
  });
}

const loopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

describe('guardedFetch connection reuse', () => {
  it('sends one request after another over one kept-alive connection to the checked address', async () => {
    for (let i = 0; i < 5; i++) expect((await get('reuse.test', loopback)).status).toBe(200);
    expect(server.answered()).toBe(5);
    expect(server.connections()).toBe(1);
  });

  it('never reuses a socket opened to another address than the one just checked', async () => {
    // The same name and port, first on the server's address, then on one where nothing listens: a pool keyed by
    // name would carry the second request over the first socket, to the address that was no longer checked.
    let answers = 0;
    const rebinding: Resolver = async () => [{ address: answers++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    expect((await get('rebind.test', rebinding)).status).toBe(200);
    const err: unknown = await get('rebind.test', rebinding).then(
      () => new Error('expected the connection to 127.0.0.2 to fail'),
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(RetryableError);
    expect((err as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(server.answered()).toBe(1);
  });

  it('sends the request again on a fresh connection when the server dropped the kept-alive one', async () => {
    expect((await get('stale.test', loopback)).status).toBe(200);
    server.dropNextReuse();
    expect((await get('stale.test', loopback)).status).toBe(200);
    expect(server.answered()).toBe(2);
    expect(server.connections()).toBe(2);
  });

  it('never sends a POST again when the server dropped the kept-alive connection after receiving it', async () => {
    const post = () =>
      guardedFetch({
        method: 'POST',
        url: `http://post.test:${server.port}/orders`,
        headers: { 'content-type': 'application/json' },
        body: '{"order":1}',
        timeoutMs: 5000,
        maxBytes: 1 << 20,
        allowedHosts: [`post.test:${server.port}`],
        resolver: loopback,
      });
    expect((await post()).status).toBe(200);
    server.dropNextReuse();
    const err: unknown = await post().then(
      () => new Error('expected the dropped POST to fail'),
      (e: unknown) => e,
    );
    // Received twice in all (the first, and the dropped one), never a third time: the step's policy decides.
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).code).toBe('network');
    expect(server.received()).toBe(2);
    expect(server.connections()).toBe(1);
  });
});
