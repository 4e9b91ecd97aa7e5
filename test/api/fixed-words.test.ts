/**
 * Fixed words (`/agents/tools`, `/agents/actions`, `/workflows/runs/…`) are never taken as an `:id`, for any method:
 * OPTIONS lists only what the fixed route answers, another method is a 405 in the envelope, and a path under a fixed
 * word that no fixed route has is an unknown route, not a lookup of a workflow called `runs`.
 */
import { fixedWords } from '../../api/routes/fixed-words';
import { expectEnvelope, expectError } from '../helpers/api';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

let api: TestApi;
let user: TestUser;
beforeAll(async () => {
  api = await startTestApi(testConfig());
  user = await createTestUser(api.database.db);
});
afterAll(() => api?.close());

const auth = () => ({ Authorization: `Bearer ${user.key}` });

/** Path → the methods its fixed route answers (HEAD comes with GET). */
const FIXED: [string, string[]][] = [
  ['/api/v1/agents/tools', ['GET', 'HEAD']],
  ['/api/v1/agents/actions', ['GET', 'HEAD']],
  ['/api/v1/workflows/runs/run_x/status', ['GET', 'HEAD']],
  ['/api/v1/workflows/runs/run_x/cancel', ['POST']],
  ['/api/v1/workflows/runs/run_x/events', ['GET', 'HEAD']],
];

it.each(FIXED)('OPTIONS %s lists only the fixed route’s methods', async (path, methods) => {
  const res = await api.http.options(path).set(auth());
  expect(res.status).toBe(200);
  expectEnvelope(res, true);
  expect(res.headers.allow!.split(/,\s*/).sort()).toEqual([...methods].sort());
  expect([...(res.body.data.allow as string[])].sort()).toEqual([...methods].sort());
});

it.each(FIXED)('%s answers every other method with 405 and the same Allow', async (path, methods) => {
  for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
    if (methods.includes(method.toUpperCase())) continue;
    const res = await api.http[method](path).set(auth()).send({ name: 'x' });
    expectError(res, 405, 'method not allowed');
    expect(res.headers.allow!.split(/,\s*/).sort()).toEqual([...methods].sort());
  }
});

// Each of these would be a route of a workflow whose id is `runs` if `runs` were taken as an id.
it.each([
  '/api/v1/workflows/runs',
  '/api/v1/workflows/runs/run',
  '/api/v1/workflows/runs/runs',
  '/api/v1/workflows/runs/hooks',
  '/api/v1/workflows/runs/hooks/hook_x',
  '/api/v1/workflows/runs/schedules',
])('%s is no route for any method', async (path) => {
  for (const method of ['options', 'get', 'post', 'patch', 'delete'] as const) {
    const res = await api.http[method](path).set(auth()).send({});
    expectError(res, 404, 'no route for');
  }
});

it('reads the fixed words from the routes: a literal segment where a route of the same prefix has a parameter', () => {
  const words = fixedWords([
    '/api/v1/agents/tools',
    '/api/v1/agents/:id',
    '/api/v1/workflows/:id/run',
    '/api/v1/workflows/runs/:runId/status',
    '/api/v1/schedules/:scheduleId/pause',
    '/console/{*path}',
  ]);
  expect([...words.keys()]).toEqual(['/api/v1/agents/:id', '/api/v1/workflows/:id/run']);
  expect(words.get('/api/v1/agents/:id')).toEqual(new Map([[4, new Set(['tools'])]]));
  expect(words.get('/api/v1/workflows/:id/run')).toEqual(new Map([[4, new Set(['runs'])]]));
});
