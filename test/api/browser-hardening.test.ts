/**
 * Hardening of what browsers and unauthenticated callers see: security headers with a CSP that keeps /docs working,
 * CORS off unless configured, the /docs asset lookup (no prototype members), and a /readyz that a flood of probes
 * cannot turn into a flood of backend pings.
 */
import type { Db } from 'mongodb';
import { Registry } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../api/app';
import { expectEnvelope } from '../helpers/api';
import { silentLogger, startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { waitFor } from '../../devstack/process';
import { composeApi } from '../../api/compose';

describe('security headers and the docs page', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it.each(['/livez', '/api/v1/agents', '/api/v1/nothing', '/docs'])('%s carries the security headers', async (path) => {
    const res = await api.http.get(path);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
  });

  it('the docs page needs nothing its CSP refuses: every script is a same-origin file, none inline', async () => {
    const page = await api.http.get('/docs');
    expect(page.status).toBe(200);
    const html = page.text;
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(body?.trim()).toBe('');
      const src = /src="([^"]+)"/.exec(attrs ?? '')?.[1];
      expect(src).toMatch(/^\/docs\//);
      const asset = await api.http.get(src!);
      expect(asset.status).toBe(200);
      expect(asset.headers['content-type']).toContain('javascript');
    }
    for (const [, href] of html.matchAll(/<link[^>]*href="([^"]+)"/g)) {
      expect(href).toMatch(/^\/docs\//);
      expect((await api.http.get(href!)).status).toBe(200);
    }
  });

  it.each(['__proto__', 'constructor', 'hasOwnProperty', 'toString', '..%2Fpackage.json'])(
    '/docs/%s is a 404 in the envelope, not a dropped connection',
    async (name) => {
      const res = await api.http.get(`/docs/${name}`);
      expect(res.status).toBe(404);
      expectEnvelope(res, false);
    },
  );
});

describe('CORS', () => {
  const preflight = (http: TestApi['http'], origin: string) =>
    http
      .options('/api/v1/agents')
      .set('Origin', origin)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization');

  it('is off by default: no CORS headers for any origin', async () => {
    const api = await startTestApi();
    try {
      const res = await preflight(api.http, 'https://evil.example');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const get = await api.http.get('/livez').set('Origin', 'https://evil.example');
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await api.close();
    }
  });

  it('answers only the configured origins', async () => {
    const api = await startTestApi(testConfig({ CORS_ORIGINS: 'https://app.example.com' }));
    try {
      const ok = await preflight(api.http, 'https://app.example.com');
      expect(ok.status).toBe(204);
      expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(ok.headers['access-control-allow-headers']).toMatch(/authorization/i);
      expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
      const other = await preflight(api.http, 'https://evil.example');
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const get = await api.http.get('/livez').set('Origin', 'https://app.example.com');
      expect(get.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(get.headers['access-control-expose-headers']).toMatch(/Link/);
    } finally {
      await api.close();
    }
  });

  it('refuses a malformed CORS_ORIGINS entry at start', () => {
    expect(() => testConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(/CORS_ORIGINS/);
  });
});

describe('/readyz under a flood of probes', () => {
  it('pings each backend once per period however many callers ask', async () => {
    const api = await startTestApi();
    let pings = 0;
    // The real database, counting its commands (the readiness check is the only caller of db.command here).
    const counted = new Proxy(api.database.db, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === 'command') {
          return (...args: Parameters<Db['command']>) => {
            pings += 1;
            return target.command(...args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const app = createApp(
      composeApi({
        config: api.config,
        db: counted,
        temporal: api.temporal,
        logger: silentLogger,
        metrics: new Registry(),
      }),
    );
    const http = request(app.callback());
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, () => http.get('/readyz')));
      expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(pings).toBe(1);
      // Later probes reuse that answer until it is older than the period, then exactly one new check runs.
      await waitFor('a fresh readiness check', async () => (await http.get('/readyz')).status === 200 && pings === 2, {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      expect(pings).toBe(2);
    } finally {
      await api.close();
    }
  });
});
