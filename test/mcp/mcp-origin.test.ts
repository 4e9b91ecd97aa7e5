/**
 * `/mcp` validates `Origin` (the Streamable HTTP transport's defence against DNS rebinding): a browser request from
 * an origin that is neither the API's own nor in CORS_ORIGINS is answered 403 before its key is even read, whatever
 * the key; a request without `Origin` (every non-browser MCP client) is served.
 */
import { originAllowed } from '../../api/mcp/origin';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } },
};

describe('originAllowed', () => {
  const none = { CORS_ORIGINS: [] };
  it.each([
    // [origin, the request's own origin, policy, allowed]
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000', none, true],
    ['http://localhost:3000', 'http://localhost:3000', none, true],
    ['http://[::1]:3000', 'http://[::1]:3000', none, true],
    ['http://127.0.0.1:3001', 'http://127.0.0.1:3000', none, false],
    ['https://127.0.0.1:3000', 'http://127.0.0.1:3000', none, false],
    ['http://evil.example', 'http://127.0.0.1:3000', none, false],
    ['null', 'http://127.0.0.1:3000', none, false],
    // DNS rebinding: the attacker's name is both Host and Origin; a name is never "our own" without PUBLIC_URL.
    ['http://evil.example:3000', 'http://evil.example:3000', none, false],
    ['https://app.example.com', 'http://127.0.0.1:3000', { CORS_ORIGINS: ['https://app.example.com'] }, true],
    ['https://evil.example', 'http://127.0.0.1:3000', { CORS_ORIGINS: ['https://app.example.com'] }, false],
    ['https://evil.example', 'http://127.0.0.1:3000', { CORS_ORIGINS: ['*'] }, true],
    [
      'https://api.example.com',
      'http://127.0.0.2:3000',
      { CORS_ORIGINS: [], PUBLIC_URL: 'https://api.example.com/' },
      true,
    ],
    // With PUBLIC_URL set, the API's own origin is that one: the request's Host no longer counts.
    [
      'http://127.0.0.1:3000',
      'http://127.0.0.1:3000',
      { CORS_ORIGINS: [], PUBLIC_URL: 'https://api.example.com' },
      false,
    ],
  ])('%s from %s → %s', (origin, own, policy, allowed) => {
    expect(originAllowed(origin, own, policy)).toBe(allowed);
  });
});

describe('/mcp Origin check', () => {
  let api: TestApi;
  let user: TestUser;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ CORS_ORIGINS: 'https://app.example.com' }));
    user = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  const post = (headers: Record<string, string>) =>
    api.http
      .post('/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set(user.auth)
      .set(headers)
      .send(initialize);

  it('answers 403 with a JSON-RPC error to a valid key sent from a foreign origin', async () => {
    const foreign: Array<Record<string, string>> = [
      { Origin: 'http://evil.example' },
      { Origin: 'null' },
      { Origin: 'http://evil.example:3000', Host: 'evil.example:3000' },
    ];
    for (const headers of foreign) {
      const res = await post(headers);
      expect(res.status).toBe(403);
      expect(res.headers['x-error-code']).toBe('forbidden');
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { http_status: 403 } } });
      expect((res.body as { error: { message: string } }).error.message).toMatch(/CORS_ORIGINS/);
    }
  });

  it("serves no Origin, the API's own origin and an origin in CORS_ORIGINS", async () => {
    // supertest listens on a new port per request: the Host is set so that the Origin is the request's own.
    const own = { Host: '127.0.0.1:3000', Origin: 'http://127.0.0.1:3000' };
    const served: Array<Record<string, string>> = [{}, own, { Origin: 'https://app.example.com' }];
    for (const headers of served) {
      const res = await post(headers);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: {} } });
    }
  });
});
