/** 429 with Retry-After per API key, per IP and for run starts; counters live in MongoDB, shared by API processes. */
import { Registry } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../../api/app';
import { RATE_LIMIT_COLLECTION } from '../../../api/middleware/rate-limit';
import { createApiKey } from '../../../db/users';
import { expectError } from '../../helpers/api';
import { openApiChecker } from '../../helpers/openapi';
import { silentLogger, startTestApi, testConfig, type TestApi } from '../../helpers/stack';
import { createTestUser } from '../../helpers/users';
import { createWorkflow, insertTemplate } from '../../helpers/workflows';
import { composeApi } from '../../../api/compose';

const oas = openApiChecker();

function expectRateLimited(res: request.Response): void {
  expectError(res, 429, 'too many requests');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers['x-error-code']).toBe('rate_limited');
}

describe('per API key', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_IP_PER_MINUTE: '1000' }));
  });
  afterAll(() => api?.close());

  it('answers 429 with Retry-After after the budget; other keys and public routes are unaffected', async () => {
    const user = await createTestUser(api.database.db);
    for (let i = 0; i < 3; i++) expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    const limited = await api.http.get('/api/v1/agents').set(user.auth);
    expectRateLimited(limited);
    oas.check(limited);
    expectRateLimited(await api.http.post('/api/v1/agents').set(user.auth).send({ name: 'x', default_prompt: 'y' }));
    expect(await api.database.db.collection('agent_templates').countDocuments({ owner_id: user.id })).toBe(0);

    const secondKey = await createApiKey(api.database.db, user.id);
    expect((await api.http.get('/api/v1/agents').set('Authorization', `Bearer ${secondKey.key}`)).status).toBe(200);
    const other = await createTestUser(api.database.db);
    expect((await api.http.get('/api/v1/agents').set(other.auth)).status).toBe(200);
    expect((await api.http.get('/api/v1/agents/tools')).status).toBe(200);
  });

  it('keeps its counters in MongoDB, so every API process shares one budget, and never stores the key', async () => {
    const user = await createTestUser(api.database.db);
    const second = createApp(
      composeApi({
        config: api.config,
        db: api.database.db,
        temporal: api.temporal,
        logger: silentLogger,
        metrics: new Registry(),
      }),
    );
    const other = request(second.callback());
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    expect((await other.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    expectRateLimited(await other.get('/api/v1/agents').set(user.auth));
    const counters = await api.database.db.collection(RATE_LIMIT_COLLECTION).find().toArray();
    expect(counters.length).toBeGreaterThan(0);
    expect(JSON.stringify(counters)).not.toContain(user.key);
  });
});

describe('per IP', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ RATE_LIMIT_IP_PER_MINUTE: '4' }));
  });
  afterAll(() => api?.close());

  it('limits public and unauthenticated requests too (key guessing costs budget)', async () => {
    const user = await createTestUser(api.database.db);
    expect((await api.http.get('/api/v1/agents/tools')).status).toBe(200);
    expect((await api.http.get('/api/v1/agents/actions')).status).toBe(200);
    expect((await api.http.get('/api/v1/agents').set('Authorization', `Bearer sw_${'B'.repeat(43)}`)).status).toBe(401);
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    const limited = await api.http.get('/api/v1/agents/tools');
    expectRateLimited(limited);
    oas.check(limited);
    expectRateLimited(await api.http.get('/api/v1/agents').set(user.auth));
    // Health endpoints stay outside the API budget (probes).
    expect((await api.http.get('/livez')).status).toBe(200);
  });
});

describe('run starts', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ RATE_LIMIT_RUNS_PER_MINUTE: '2' }));
  });
  afterAll(() => api?.close());

  it('has its own, stricter budget per key, charged only once the workflow is found', async () => {
    const user = await createTestUser(api.database.db);
    const approval = await insertTemplate(api.database.db, user.id, { step_type: 'action', action_type: 'approval' });
    const workflowId = await createWorkflow(api, user, {
      name: 'held open',
      steps: [{ id: 'review', template_id: approval._id, config: { message: 'Go?' } }],
    });
    // Starts of a workflow that does not exist are 404s, however many: they do not use up the budget.
    for (let i = 0; i < 3; i++) {
      expectError(await api.http.post('/api/v1/workflows/wf_missing/run').set(user.auth).send({}), 404, 'not found');
    }
    const start = () => api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send({});
    expect((await start()).status).toBe(202);
    expect((await start()).status).toBe(202);
    expectRateLimited(await start());
    // The general per-key budget is separate.
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
  });
});
