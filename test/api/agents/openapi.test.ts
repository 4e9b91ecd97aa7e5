/** The OpenAPI document matches the router, the checker used across the suite bites, and /docs works offline. */
import type Router from '@koa/router';
import { Registry } from 'prom-client';
import type { Response } from 'supertest';
import { buildOpenApiDocument } from '../../../api/openapi/document';
import { rootRouter } from '../../../api/routes';
import { expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { silentLogger, startTestApi, type TestApi } from '../../helpers/stack';
import { composeApi } from '../../../api/compose';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Pages and assets of the docs UI are not API operations. */
// The API docs page and the web console are static files, not API operations.
const NOT_API = (path: string) =>
  path === '/docs' || path.startsWith('/docs/') || path === '/console' || path.startsWith('/console/');

function registeredRoutes(router: Router): Set<string> {
  const out = new Set<string>();
  for (const layer of router.stack) {
    const path = String(layer.path);
    for (const method of layer.methods) {
      if (method === 'HEAD' || NOT_API(path)) continue;
      out.add(`${method.toLowerCase()} ${path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    }
  }
  return out;
}

function documentedOperations(doc: ReturnType<typeof buildOpenApiDocument>): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) if ((item as Record<string, unknown>)[method]) out.add(`${method} ${path}`);
  }
  return out;
}

it('documents every route the router serves, and nothing it does not', () => {
  const router = rootRouter(
    composeApi({
      config: api.config,
      db: api.database.db,
      temporal: api.temporal,
      logger: silentLogger,
      metrics: new Registry(),
    }),
  );
  const routes = registeredRoutes(router);
  const documented = documentedOperations(buildOpenApiDocument(api.config));
  expect(routes.size).toBeGreaterThanOrEqual(10);
  expect([...routes].filter((r) => !documented.has(r))).toEqual([]);
  expect([...documented].filter((r) => !routes.has(r))).toEqual([]);
});

it('gives every API operation its error responses, and authenticated ones a security requirement', () => {
  const doc = buildOpenApiDocument(api.config);
  expect(doc.openapi).toBe('3.1.0');
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') continue;
    for (const method of METHODS) {
      const op = (item as Record<string, { responses: Record<string, unknown>; security?: unknown[] } | undefined>)[
        method
      ];
      if (!op) continue;
      for (const status of ['429', '500', '503']) expect(op.responses).toHaveProperty(status);
      // Inbound webhooks authenticate by their unguessable id (and, signed, by signature), not by an API key.
      const isPublic =
        path === '/api/v1/agents/tools' || path === '/api/v1/agents/actions' || path === '/api/v1/hooks/{hookId}';
      expect(Boolean(op.security?.length)).toBe(!isPublic);
      if (!isPublic) expect(op.responses).toHaveProperty('401');
    }
  }
});

it('serves the same document at /api/v1/openapi.json', async () => {
  const res = await api.http.get('/api/v1/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(api.config))));
});

describe('the conformance checker', () => {
  const oas = openApiChecker();
  const fake = (method: string, path: string, status: number, body: unknown) =>
    ({ req: { method, path }, status, body }) as unknown as Response;

  it('accepts a conforming response', () => {
    expect(() => oas.check(fake('GET', '/api/v1/agents/tools', 200, { data: [], error: null }))).not.toThrow();
  });
  it('rejects a body that does not match the schema', () => {
    expect(() => oas.check(fake('GET', '/api/v1/agents/tools', 200, { data: [{ name: 'x' }], error: null }))).toThrow(
      /does not match/,
    );
    expect(() => oas.check(fake('GET', '/api/v1/agents/nope', 404, { data: null, error: 'x', extra: 1 }))).toThrow(
      /does not match/,
    );
  });
  it('rejects an undocumented status or operation', () => {
    expect(() => oas.check(fake('GET', '/api/v1/agents/tools', 404, { data: null, error: 'x' }))).toThrow(
      /not documented/,
    );
    expect(() => oas.check(fake('PUT', '/api/v1/agents', 200, { data: null, error: 'x' }))).toThrow(/no operation/);
  });
});

describe('/docs (offline)', () => {
  it('serves the page with local assets only', async () => {
    const page = await api.http.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    for (const ref of refs) {
      expect(ref.startsWith('/docs/')).toBe(true);
      const asset = await api.http.get(ref);
      expect(asset.status).toBe(200);
      expect(Number(asset.headers['content-length'] ?? asset.text?.length ?? 1)).toBeGreaterThan(0);
    }
    const init = await api.http.get('/docs/init.js');
    expect(init.text).toContain("url: '/api/v1/openapi.json'");
  });

  it('serves nothing else from node_modules', async () => {
    for (const path of [
      '/docs/package.json',
      '/docs/..%2F..%2Fpackage.json',
      '/docs/index.html',
      '/docs/swagger-ui.js.map',
    ]) {
      expectError(await api.http.get(path), 404);
    }
  });
});
