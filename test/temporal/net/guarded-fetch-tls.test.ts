/** HTTPS through the guard: SNI carries the URL's name while TCP goes to the pinned address; untrusted certs fail. */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { toApplicationFailure } from '../../../temporal/failures';
import { guardedFetch, type Resolver } from '../../../temporal/net/guarded-fetch';

const dir = path.join(__dirname, '../../fixtures/tls');
const credentials = { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) };
let server: https.Server;
let port: number;
const sni: string[] = [];
let requests = 0;

beforeAll(async () => {
  server = https.createServer(
    {
      ...credentials,
      SNICallback: (servername, callback) => {
        sni.push(servername);
        callback(null, createSecureContext(credentials));
      },
    },
    (_req, res) => {
      requests++;
      res.end('secret');
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('guardedFetch over TLS', () => {
  it('refuses an untrusted certificate as a non-retryable tls_error, having sent the name as SNI', async () => {
    const looked: string[] = [];
    const resolver: Resolver = async (host) => {
      looked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const err: unknown = await guardedFetch({
      method: 'GET',
      url: `https://pinned.test:${port}/`,
      timeoutMs: 5000,
      maxBytes: 1000,
      allowedHosts: [`pinned.test:${port}`],
      resolver,
    }).catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'tls_error', nonRetryable: true });
    // Resolved once, connected to the pinned loopback address, and the handshake named the URL's host.
    expect(looked).toEqual(['pinned.test']);
    expect(sni).toEqual(['pinned.test']);
    expect(requests).toBe(0);
  });

  it('refuses the same server without the allowlist before any handshake', async () => {
    const before = sni.length;
    const err: unknown = await guardedFetch({
      method: 'GET',
      url: `https://127.0.0.1:${port}/`,
      timeoutMs: 5000,
      maxBytes: 1000,
      allowedHosts: [],
    }).catch((e: unknown) => e);
    expect(toApplicationFailure(err)).toMatchObject({ type: 'url_refused', nonRetryable: true });
    expect(sni).toHaveLength(before);
  });
});
