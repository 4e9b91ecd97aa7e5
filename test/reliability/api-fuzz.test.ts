/**
 * R9: fuzzing every operation of the OpenAPI document the API serves (`/api/v1/openapi.json`) with fast-check:
 * path parameters (own, foreign, malformed ids), documented query parameters, headers, bodies (valid, mutated,
 * random JSON, non-JSON) and credentials. Every answer is the `{data, error}` envelope, never a 5xx (MongoDB and
 * Temporal are up), and conforms to the document (operation exists, status documented, body matches its schema).
 */
import fc from 'fast-check';
import type { Response } from 'supertest';
import { expectEnvelope } from '../helpers/api';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, startRun } from '../helpers/workflows';

const RUNS_PER_OPERATION = 60;

interface Operation {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  params: { in: string; name: string }[];
  hasBody: boolean;
}

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let operations: Operation[];
const ids: Record<string, string[]> = {};
const oas = openApiChecker();

beforeAll(async () => {
  api = await startTestApi(
    testConfig({
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_RUNS_PER_MINUTE: '100000',
      RATE_LIMIT_IP_PER_MINUTE: '100000',
      // No worker polls this queue: started runs stay queued, so cancel/approve/status see live runs.
      RUN_STATUS_CHECK_AFTER_SECONDS: '3600',
      // An event stream of a run that never ends stays open until this: a fuzzed request must get an answer.
      EVENTS_MAX_STREAM_SECONDS: '1',
    }),
  );
  [alice, bob] = [await createTestUser(api.database.db), await createTestUser(api.database.db)];
  const doc = await api.http.get('/api/v1/openapi.json');
  expect(doc.status).toBe(200);
  const paths = (
    doc.body as { paths: Record<string, Record<string, { parameters?: Operation['params']; requestBody?: unknown }>> }
  ).paths;
  operations = Object.entries(paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method: method as Operation['method'],
        path,
        params: op.parameters ?? [],
        hasBody: op.requestBody !== undefined,
      })),
    );

  // Real ids of both users, so that fuzzed requests also reach the handlers past the lookups.
  const own = async (user: TestUser) => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const agent = await api.http.post('/api/v1/agents').set(user.auth).send({ name: 'a', default_prompt: 'p' });
    const wf = await createWorkflow(api, user, {
      name: 'fuzz',
      steps: [
        { id: 'gate', template_id: tpl.approval._id, config: { message: 'ok?' } },
        { id: 'ask', template_id: agent.body.data.id as string, prompt: 'Say hi.' },
      ],
    });
    const run = await startRun(api, user, wf);
    return { agent: agent.body.data.id as string, wf, run, tpl: tpl.transform._id };
  };
  const [a, b] = [await own(alice), await own(bob)];
  ids.id = [a.agent, a.wf, a.tpl, b.agent, b.wf];
  ids.runId = [a.run, b.run];
  ids.stepId = ['gate', 'ask', 'nope'];
}, 60_000);
afterAll(() => api?.close());

const malformedId = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.constantFrom('tools', 'actions', 'runs', 'run_', 'tpl_x', 'wf_' + 'a'.repeat(300), '%00', '$where', 'null'),
  )
  .filter((s) => s !== '.' && s !== '..')
  .map((s) => encodeURIComponent(s));

const param = (name: string) =>
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...(ids[name] ?? ['x'])) }, { weight: 2, arbitrary: malformedId });

/** Documented query parameters: valid values, values just outside the rules, junk. `wait` stays short. */
const queryValue = (name: string) =>
  name === 'wait'
    ? fc.constantFrom('0', '-1', '61', '1.5', 'x', '', '1e3')
    : fc.oneof(
        fc.integer({ min: -5, max: 250 }).map(String),
        fc.string({ maxLength: 30 }),
        fc.constantFrom('agent', 'action', 'bogus', 'eyJ4IjoxfQ', '0', '201', '1e2', '[]'),
      );

/**
 * R10 payload classes (the test table in docs/reliability.md): inputs built to be expensive or to reach across tenants. Fuzzed through every
 * operation like the rest: the answer must still be a documented envelope, never a 5xx, and (by the suite's timeout)
 * never a stall.
 */
const hostileString = fc.constantFrom(
  `{{${' '.repeat(20_000)}`,
  '{{ {{ '.repeat(3_000),
  `{{input${'.a'.repeat(3_000)}}}`,
  `{{input${'[0]'.repeat(200)}}}`,
  '{{steps.x.output}}'.repeat(1_000),
  `${'a'.repeat(40)}!`,
  '$pad("", 500000000)',
  '$match($string($), /(a+)+$/)',
  '($f := function($n){ $f($n) }; $f(1))',
  `${'('.repeat(5_000)}1${')'.repeat(5_000)}`,
);
const hostileSchema = fc.constantFrom<Record<string, unknown>>(
  { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
  { type: 'object', patternProperties: { '^(a|a)*$': { type: 'string' } } },
  { type: 'array', uniqueItems: true },
  { type: 'string', pattern: '(?<=a)b' },
  { type: 'string', pattern: '(a)\\1' },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $defs: { node: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/node' } }, { type: 'string' }] } },
    $ref: '#/$defs/node',
  },
  { $ref: 'http://127.0.0.1:9/latest/meta-data' },
  { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
);
const forgedReference = fc.constantFrom(
  { stepwise_blob: 'blob_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', bytes: 10 },
  { nested: { stepwise_blob: 'blob_x', bytes: 1, path: ['a'] } },
);
const hostileBody = fc.record(
  {
    name: hostileString,
    default_prompt: hostileString,
    input: fc.oneof(
      fc.record({ s: hostileString, ref: forgedReference }),
      fc.array(fc.record({ k: fc.nat(3) }), { minLength: 2_000, maxLength: 2_000 }).map((items) => ({ items })),
    ),
    output_schema: hostileSchema,
    config: fc.oneof(
      hostileSchema.map((input_schema) => ({ input_schema })),
      fc.record({ expression: hostileString, data: fc.oneof(hostileString, forgedReference) }),
    ),
    steps: fc.constantFrom(
      [{ id: 'x', template_id: 'tpl_nope', input: `{{${' '.repeat(20_000)}` }],
      [{ id: 'x', template_id: 'tpl_nope', output_schema: { type: 'string', pattern: '^(a+)+$' } }],
    ),
  },
  { requiredKeys: [] },
);

const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileBody,
  fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
      steps: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant([{ id: 'x', template_id: 'tpl_nope' }])),
      input: fc.jsonValue({ maxDepth: 3 }),
      step_id: fc.constantFrom('gate', 'ask', 'nope', 'Bad Id', ''),
      approved: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 1 })),
      comment: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null)),
      default_prompt: fc.string({ maxLength: 20 }),
      config: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);

const body = fc.oneof(
  { weight: 4, arbitrary: jsonBody.map((b) => ({ type: 'application/json', raw: JSON.stringify(b) })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 50 }).map((raw) => ({ type: 'application/json', raw })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 50 }).map((raw) => ({ type: 'text/plain', raw })) },
);

const auth = fc.oneof(
  { weight: 8, arbitrary: fc.constant('alice') },
  { weight: 1, arbitrary: fc.constant('none') },
  { weight: 1, arbitrary: fc.constantFrom('Bearer ', 'Bearer sk_nope', 'Basic YTpi', 'bearer x y') },
);

function requestFor(op: Operation) {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  return fc.record({
    path: fc.tuple(...pathParams.map((p) => param(p.name))).map((values) => {
      let path = op.path;
      pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, values[i]!)));
      return path;
    }),
    query: fc
      .tuple(...queryParams.map((p) => fc.option(queryValue(p.name), { nil: undefined })))
      .map((values) =>
        Object.fromEntries(queryParams.flatMap((p, i) => (values[i] === undefined ? [] : [[p.name, values[i]]]))),
      ),
    idempotencyKey: fc.option(fc.stringMatching(/^[\x20-\x7e]{0,210}$/), { nil: undefined }),
    body: op.hasBody ? fc.option(body, { nil: undefined }) : fc.constant(undefined),
    auth,
  });
}

type FuzzRequest = ReturnType<typeof requestFor> extends fc.Arbitrary<infer T> ? T : never;

async function send(op: Operation, r: FuzzRequest): Promise<Response> {
  let req = api.http[op.method](r.path).query(r.query);
  if (r.auth === 'alice') req = req.set(alice.auth);
  else if (r.auth !== 'none') req = req.set('Authorization', r.auth);
  if (r.idempotencyKey !== undefined) req = req.set('Idempotency-Key', r.idempotencyKey);
  if (r.body) req = req.set('Content-Type', r.body.type).send(r.body.raw);
  return req;
}

it('every operation of the OpenAPI document: envelope, no 5xx, conforms to the document', async () => {
  expect(operations.length).toBeGreaterThanOrEqual(15);
  for (const op of operations) {
    await fc.assert(
      fc.asyncProperty(requestFor(op), async (r) => {
        const res = await send(op, r);
        const where = `${op.method.toUpperCase()} ${r.path}?${new URLSearchParams(r.query).toString()} body=${r.body?.raw.slice(0, 200)}`;
        if (res.status >= 500) throw new Error(`${where} → ${res.status} ${JSON.stringify(res.body)}`);
        try {
          // The document itself and an event stream are the success bodies that are not enveloped.
          const stream = res.status === 200 && String(res.headers['content-type']).startsWith('text/event-stream');
          if (!(op.path === '/api/v1/openapi.json' && res.status === 200) && !stream) {
            expectEnvelope(res, res.status < 300);
          }
          oas.check(res);
        } catch (err) {
          throw new Error(`${where} → ${res.status}: ${(err as Error).message}`);
        }
      }),
      { numRuns: RUNS_PER_OPERATION },
    );
  }
  // Every operation was exercised and answered at least once in a documented way.
  expect([...oas.checked].length).toBe(operations.length);
  // Bob's resources are untouched by Alice's fuzzing (ownership holds under fuzzing too).
  for (const id of ids.id!.slice(3)) {
    const path = id.startsWith('wf') ? `/api/v1/workflows/${id}` : `/api/v1/agents/${id}`;
    expect((await api.http.get(path).set(bob.auth)).status).toBe(200);
  }
  expect((await api.http.get(`/api/v1/workflows/runs/${ids.runId![1]}/status`).set(bob.auth)).body.data.status).toBe(
    'queued',
  );
}, 180_000);

it('an overlong id is the same 404 as any unknown id (not an undocumented 400)', async () => {
  const long = `wf_${'a'.repeat(300)}`;
  const longRun = `run_${'a'.repeat(300)}`;
  const requests = [
    api.http.get(`/api/v1/workflows/${long}`),
    api.http.delete(`/api/v1/workflows/${long}`),
    api.http.patch(`/api/v1/workflows/${long}`).send({ name: 'x' }),
    api.http.get(`/api/v1/workflows/${long}/runs`),
    api.http.post(`/api/v1/workflows/${long}/run`).send({}),
    api.http.get(`/api/v1/workflows/runs/${longRun}/status`),
    api.http.post(`/api/v1/workflows/runs/${longRun}/cancel`),
    api.http.post(`/api/v1/workflows/runs/${longRun}/approve`).send({ step_id: 'gate', approved: true }),
  ];
  for (const req of requests) {
    const res = await req.set(alice.auth);
    expect(res.status).toBe(404);
    expectEnvelope(res, false);
    oas.check(res);
  }
});
