/**
 * Property-based tests of the write endpoints: random and mutated bodies never give a 5xx, always give the envelope,
 * and every response conforms to the OpenAPI document.
 */
import fc from 'fast-check';
import type { Response } from 'supertest';
import { actionBody, agentBody, expectEnvelope } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { startTestApi, testConfig, type TestApi } from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';

let api: TestApi;
let user: TestUser;
let ownId: string;
const oas = openApiChecker();
const RUNS = 100;

beforeAll(async () => {
  api = await startTestApi(testConfig({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_IP_PER_MINUTE: '100000' }));
  user = await createTestUser(api.database.db);
  ownId = (await api.http.post('/api/v1/agents').set(user.auth).send(agentBody())).body.data.id;
});
afterAll(() => api?.close());

const FIELDS = [
  'name',
  'default_prompt',
  'default_tools',
  'default_tasks',
  'tags',
  'short_description',
  'step_type',
  'action_type',
  'model',
  'config',
  'max_turns',
  'output_schema',
] as const;

/** Values that sit near the rules: right and wrong types, registry names, limits, operator-looking strings. */
const interesting = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    'agent',
    'action',
    'send_email',
    'delay',
    'http_fetch',
    'calculator',
    'openai:gpt-4o-mini',
    '{{input.x}}',
    '$where',
    '',
  ),
  fc.array(fc.constantFrom('http_fetch', 'calculator', 'nope', '', 'x'.repeat(70)), { maxLength: 55 }),
  fc.string({ maxLength: 300 }),
  fc.integer({ min: -5, max: 60 }),
  fc.constant(null),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  // Any UTF-16 in keys and values, NUL and lone surrogates included.
  fc.dictionary(
    fc.oneof(
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.constantFrom('a\u0000b', '\u0000', '$gt', 'a.b', '__proto__', 'type'),
    ),
    fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
    { maxKeys: 3 },
  ),
);

type Body = Record<string, unknown>;

/** A valid body with a few fields replaced, removed or added. */
const mutated = fc
  .tuple(
    fc.constantFrom<Body>(
      agentBody(),
      actionBody(),
      agentBody({ default_tools: ['http_fetch'], output_schema: { type: 'object' } }),
    ),
    fc.array(
      fc.oneof(
        fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...FIELDS), value: interesting }),
        fc.record({ op: fc.constant('delete' as const), key: fc.constantFrom(...FIELDS) }),
        fc.record({
          op: fc.constant('add' as const),
          key: fc.string({ minLength: 1, maxLength: 20 }),
          value: interesting,
        }),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([base, ops]) => {
    const body: Body = { ...base };
    for (const op of ops) {
      if (op.op === 'delete') delete body[op.key];
      else body[op.key] = op.value;
    }
    return body;
  });

/** Anything at all that is JSON, including non-objects. */
const random = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(fc.constantFrom(...FIELDS), interesting));

async function expectSafe(res: Response, allowed: number[]): Promise<void> {
  if (res.status >= 500 || !allowed.includes(res.status)) {
    throw new Error(
      `status ${res.status} for ${JSON.stringify((res as unknown as { request: { _data: unknown } }).request._data)?.slice(0, 500)}: ${JSON.stringify(res.body)}`,
    );
  }
  expectEnvelope(res, res.status < 300);
  oas.check(res);
}

// 409: a mutated body may repeat a name an earlier run stored (names are unique per owner).
it('POST /api/v1/agents: mutated bodies → 201, 400 or 409, never a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(mutated, async (body) => {
      await expectSafe(await api.http.post('/api/v1/agents').set(user.auth).send(body), [201, 400, 409]);
    }),
    { numRuns: RUNS },
  );
});

it('POST /api/v1/agents: random JSON → 201, 400 or 409, never a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(random, async (body) => {
      const raw = JSON.stringify(body);
      await expectSafe(
        await api.http.post('/api/v1/agents').set(user.auth).set('Content-Type', 'application/json').send(raw),
        [201, 400, 409],
      );
    }),
    { numRuns: RUNS },
  );
});

it('POST /api/v1/agents: random text as a JSON body → 400, never a 5xx', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
      await expectSafe(
        await api.http.post('/api/v1/agents').set(user.auth).set('Content-Type', 'application/json').send(raw),
        [201, 400],
      );
    }),
    { numRuns: RUNS },
  );
});

it('POST /api/v1/agents: free-form JSON fields (output_schema, action data) with any keys → 201 or 400', async () => {
  const nastyKey = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.constantFrom('a\u0000b', '\u0000', '$gt', 'a.b', '__proto__', 'constructor', 'type', ''),
  );
  const freeForm = fc.dictionary(
    nastyKey,
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(nastyKey, fc.string(), { maxKeys: 2 })),
    {
      minKeys: 1,
      maxKeys: 3,
    },
  );
  const body = fc.oneof(
    freeForm.map((schema) => agentBody({ output_schema: schema })),
    freeForm.map((data) => actionBody({ action_type: 'transform', config: { expression: '$', data } })),
    freeForm.map((payload) =>
      actionBody({ action_type: 'http_request', config: { method: 'POST', url: '{{input.url}}', body: payload } }),
    ),
  );
  await fc.assert(
    fc.asyncProperty(body, async (b) => {
      await expectSafe(
        await api.http
          .post('/api/v1/agents')
          .set(user.auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(b)),
        [201, 400],
      );
    }),
    { numRuns: RUNS },
  );
});

it('PATCH /api/v1/agents/:id: mutated and partial bodies → 200, 400 or 409, never a 5xx; the template stays valid', async () => {
  const partial = fc
    .tuple(mutated, fc.subarray([...FIELDS, 'extra'], { minLength: 0 }))
    .map(([body, keys]) =>
      Object.fromEntries(Object.entries(body).filter(([k]) => keys.includes(k as (typeof FIELDS)[number]))),
    );
  await fc.assert(
    fc.asyncProperty(fc.oneof(partial, random), async (body) => {
      await expectSafe(
        await api.http
          .patch(`/api/v1/agents/${ownId}`)
          .set(user.auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body)),
        [200, 400, 409],
      );
    }),
    { numRuns: RUNS },
  );
  // Whatever was accepted, the stored template still reads back and conforms.
  const res = await api.http.get(`/api/v1/agents/${ownId}`).set(user.auth);
  expect(res.status).toBe(200);
  oas.check(res);
});
