/** Bad input of every kind gets the envelope, the right status and a message naming the field; never a 5xx. */
import { templatesCollection } from '../../../db/templates';
import { createApiKey, revokeApiKey, createUser } from '../../../db/users';
import type { Test } from 'supertest';
import { agentBody, expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, testConfig, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

let api: TestApi;
let user: TestUser;
let templateId: string;
const oas = openApiChecker();

beforeAll(async () => {
  // Keys read on every request, so a revocation bites at once here; the cache's bound is tested in key-cache.test.ts.
  api = await startTestApi(testConfig({ API_KEY_CACHE_SECONDS: '0' }));
  user = await createTestUser(api.database.db);
  const res = await api.http
    .post('/api/v1/agents')
    .set(user.auth)
    .send(agentBody({ name: 'Helper' }));
  templateId = res.body.data.id;
});
afterAll(() => api?.close());

const postRaw = (body: string, type = 'application/json') =>
  api.http.post('/api/v1/agents').set(user.auth).set('Content-Type', type).send(body);
const post = async (body: unknown) => {
  const res = await api.http
    .post('/api/v1/agents')
    .set(user.auth)
    .send(body as object);
  oas.check(res);
  return res;
};
const patch = async (body: unknown) => {
  const res = await api.http
    .patch(`/api/v1/agents/${templateId}`)
    .set(user.auth)
    .send(body as object);
  oas.check(res);
  return res;
};

describe('malformed and non-JSON bodies', () => {
  it.each(['{"name":', '{name: "x"}', "{'a':1}", '{"a":1}}', '\u0000'])('malformed JSON %j → 400', async (raw) => {
    const res = await postRaw(raw);
    expectError(res, 400, 'malformed JSON');
    oas.check(res);
  });

  it('a bare JSON string or number is malformed for every endpoint', async () => {
    expectError(await postRaw('"just a string"'), 400);
    expectError(await postRaw('42'), 400);
  });

  it('a JSON array or null body is a wrong type', async () => {
    expectError(await postRaw('[]'), 400, 'expected object, got array');
    expectError(await postRaw('null'), 400);
  });

  it('an empty JSON body lists the required fields', async () => {
    expectError(await postRaw(''), 400, 'name: required', 'default_prompt: required');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'a %s body → 415',
    async (type) => {
      const res = await postRaw('name=x', type);
      expectError(res, 415, 'JSON');
      oas.check(res);
    },
  );

  it('a body over 256 KiB → 413', async () => {
    const res = await post(agentBody({ default_prompt: 'x'.repeat(300 * 1024) }));
    expectError(res, 413, 'limit');
  });

  it.each([40, 150, 50_000])('JSON nested %i levels deep is refused with 400, not a 5xx', async (depth) => {
    const raw = `{"name":"x","default_prompt":"y","config":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    expectError(await postRaw(raw), 400, 'config.a', 'nested too deeply');
  });
});

describe('wrong types and unknown fields', () => {
  it.each([
    [{ name: 5, default_prompt: 'y' }, 'name: expected string, got number'],
    [agentBody({ tags: 'web' }), 'tags: expected array, got string'],
    [agentBody({ default_tools: [1] }), 'default_tools[0]: expected string, got number'],
    [agentBody({ default_tasks: [null] }), 'default_tasks[0]: expected string, got null'],
    [agentBody({ max_turns: '5' }), 'max_turns: expected number, got string'],
    [agentBody({ config: [] }), 'config: expected object, got array'],
    [agentBody({ step_type: true }), 'step_type: must be one of'],
  ])('%j → 400 %s', async (body, message) => {
    expectError(await post(body), 400, message);
  });

  it.each(['id', 'system', 'owner_id', 'created_at', 'updated_at', 'system_key', 'nonsense'])(
    'refuses the field %s (unknown or server-owned)',
    async (field) => {
      expectError(await post(agentBody({ [field]: 'x' })), 400, `${field}: unknown field`);
      expectError(await patch({ [field]: 'x' }), 400, `${field}: unknown field`);
    },
  );

  it('refuses unknown query parameters and bad paging values, naming them', async () => {
    const list = async (qs: string) => {
      const res = await api.http.get(`/api/v1/agents?${qs}`).set(user.auth);
      oas.check(res);
      return res;
    };
    expectError(await list('owner_id=usr_x'), 400, 'owner_id: unknown field');
    expectError(await list('tag[$ne]=x'), 400, 'unknown field');
    expectError(await list('limit=0'), 400, 'limit: must be at least 1');
    expectError(await list('limit=201'), 400, 'limit: must be at most 200');
    expectError(await list('limit=ten'), 400, 'limit');
    expectError(await list('step_type=robot'), 400, 'step_type: must be one of');
    expectError(await list('cursor=bm90IGEgY3Vyc29y'), 400, 'cursor: invalid');
  });
});

describe('$-prefixed and dotted keys anywhere', () => {
  it.each([
    [{ name: 'x', default_prompt: 'y', $where: '1' }, '$where'],
    [agentBody({ config: { $set: { system: true } } }), 'config.$set'],
    // Inside a schema, `$` and `.` are JSON Schema syntax (test/api/user-schemas.test.ts); around it they are not.
    [agentBody({ config: { output_schema: { $ref: '#' } } }), 'config.output_schema.$ref'],
    [agentBody({ tags: [{ $gt: '' }] }), 'tags[0].$gt'],
    [
      agentBody({ output_schema: { type: 'object', properties: { 'a\u0000b': { type: 'string' } } } }),
      'output_schema.properties.a',
    ],
  ])('POST %j → 400 naming %s', async (body, path) => {
    expectError(await post(body), 400, path, 'may not start with "$" or contain "."');
  });

  it('PATCH too', async () => {
    expectError(await patch({ config: { 'x.y': 1 } }), 400, 'config.x.y');
    expectError(await patch({ $set: { owner_id: null } }), 400, '$set');
    const stored = await templatesCollection(api.database.db).findOne({ _id: templateId });
    expect(stored?.owner_id).toBe(user.id);
  });
});

describe('over-long fields (the message names the field)', () => {
  it.each([
    [agentBody({ name: 'n'.repeat(201) }), 'name: too long (max 200 characters)'],
    [agentBody({ default_prompt: 'p'.repeat(32 * 1024 + 1) }), 'default_prompt: too long (max 32 KiB)'],
    // 16 385 two-byte characters: under 32 K characters, over 32 KiB of UTF-8.
    [agentBody({ default_prompt: 'é'.repeat(16 * 1024 + 1) }), 'default_prompt: too long (max 32 KiB)'],
    [agentBody({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }), 'tags: too many items (max 50)'],
    [agentBody({ tags: ['a', 'b', 'c', 'x'.repeat(65)] }), 'tags[3]: too long (max 64 characters)'],
    [agentBody({ default_tasks: Array.from({ length: 51 }, () => 'task') }), 'default_tasks: too many items (max 50)'],
    [
      agentBody({ default_tools: Array.from({ length: 51 }, () => 'calculator') }),
      'default_tools: too many items (max 50)',
    ],
    [agentBody({ short_description: 's'.repeat(1001) }), 'short_description: too long (max 1000 characters)'],
  ])('%#: %s', async (body, message) => {
    expectError(await post(body), 400, message);
  });

  it('accepts fields exactly at their limits', async () => {
    const res = await post(
      agentBody({
        name: 'n'.repeat(200),
        default_prompt: 'p'.repeat(32 * 1024),
        tags: Array.from({ length: 50 }, (_, i) => `t${i}`),
        default_tasks: Array.from({ length: 50 }, () => 'task'),
      }),
    );
    expect(res.status).toBe(201);
  });

  it('lists several problems at once', async () => {
    expectError(
      await post({ name: '', default_prompt: 3, tags: 'x' }),
      400,
      'name: must not be empty',
      'default_prompt:',
      'tags:',
    );
  });
});

describe('authentication', () => {
  const routes = (id: string): [string, string][] => [
    ['get', '/api/v1/agents'],
    ['post', '/api/v1/agents'],
    ['get', `/api/v1/agents/${id}`],
    ['patch', `/api/v1/agents/${id}`],
    ['delete', `/api/v1/agents/${id}`],
  ];
  const call = (method: string, path: string, authorization?: string) => {
    const req = (api.http as unknown as Record<string, (p: string) => Test>)[method]!(path);
    if (authorization !== undefined) req.set('Authorization', authorization);
    return method === 'post' || method === 'patch' ? req.send(agentBody()) : req;
  };

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a key', 'Bearer '],
    ['two tokens', 'Bearer a b'],
    ['malformed key', 'Bearer not-a-key'],
    ['unknown key', `Bearer sw_${'A'.repeat(43)}`],
  ])('%s credentials → 401 on every protected route', async (_label, authorization) => {
    for (const [method, path] of routes(templateId)) {
      const res = await call(method, path, authorization);
      expectError(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      oas.check(res);
    }
  });

  it('a revoked key → 401; the user’s other key still works', async () => {
    const u = await createUser(api.database.db, `revoke-${Date.now()}`);
    const first = await createApiKey(api.database.db, u._id);
    const second = await createApiKey(api.database.db, u._id);
    expect((await call('get', '/api/v1/agents', `Bearer ${first.key}`)).status).toBe(200);
    expect(await revokeApiKey(api.database.db, first.doc._id)).toBe(true);
    for (const [method, path] of routes(templateId))
      expectError(await call(method, path, `Bearer ${first.key}`), 401, 'revoked');
    expect((await call('get', '/api/v1/agents', `Bearer ${second.key}`)).status).toBe(200);
  });

  it('nothing was changed by the refused requests', async () => {
    const stored = await templatesCollection(api.database.db).findOne({ _id: templateId });
    expect(stored).toMatchObject({ name: 'Helper', owner_id: user.id });
  });
});
