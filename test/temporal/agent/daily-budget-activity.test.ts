/**
 * The callModel activity and the user's daily token budget, in MockActivityEnvironment against the real database and
 * the scripted OpenAI-compatible HTTP server: a retried attempt of the same model call (same run, step and seq) is
 * counted once, distinct calls add up, and a call at the limit is refused before the model is asked.
 */
import { Registry } from 'prom-client';
import { createWorkerMetrics } from '../../../runtime/metrics/worker-metrics';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Database } from '../../../db/client';
import { tokensUsedOn, usageCollection } from '../../../db/usage';
import { createCallModelActivity } from '../../../temporal/activities/agent';
import type { CallModelInput, CallModelResult } from '../../../temporal/activities/agent/types';
import { firstCall, newAgentRun } from './call-model-fixtures';
import { startLlmServer, type LlmServer, type ModelScript } from '../../helpers/llm-server';
import { openTestDb, silentLogger, testConfig, uniqueId } from '../../helpers/stack';

const LIMIT = 100;

describe('callModel and the daily token budget', () => {
  let llm: LlmServer;
  let database: Database;
  let callModel: ReturnType<typeof createCallModelActivity>;

  beforeAll(async () => {
    llm = await startLlmServer();
    const config = testConfig({
      OPENAI_API_KEY: 'sk-test-daily-0123456789',
      OPENAI_BASE_URL: llm.baseUrl,
      USER_MAX_TOKENS_PER_DAY: String(LIMIT),
    });
    database = await openTestDb(config);
    callModel = createCallModelActivity({
      config,
      db: database.db,
      logger: silentLogger,
      metrics: createWorkerMetrics(new Registry()),
    });
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
    await llm?.close();
  });

  const newRun = (ownerId: string, script: ModelScript) => newAgentRun(database.db, ownerId, script);

  const attempt = (n: number, req: CallModelInput) =>
    new MockActivityEnvironment({ attempt: n }).run<[CallModelInput], CallModelResult, typeof callModel>(
      callModel,
      req,
    );

  it('counts a retried attempt of the same call once, and distinct calls each', async () => {
    const owner = uniqueId('usr_');
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 20, output: 10 } }]);
    const runId = await newRun(owner, script);
    const req = firstCall(runId, owner, script);

    await attempt(1, req);
    // Temporal retries the same call (e.g. the first attempt's result was lost): the model is asked again ...
    await attempt(2, req);
    expect(script.requests).toHaveLength(2);
    // ... but the user's day counts the call once.
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(30);

    // Another run's call is another key.
    const other = await newRun(owner, script);
    await attempt(1, firstCall(other, owner, script));
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(60);
  });

  it('refuses a call once the day is spent, non-retryable, without asking the model', async () => {
    const owner = uniqueId('usr_');
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 80, output: 40 } }]);
    await attempt(1, firstCall(await newRun(owner, script), owner, script));
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(120);

    const refused = attempt(1, firstCall(await newRun(owner, script), owner, script));
    await expect(refused).rejects.toMatchObject({ type: 'budget_exceeded', nonRetryable: true });
    expect(script.requests).toHaveLength(1);
    const day = await usageCollection(database.db).findOne({ owner_id: owner });
    expect(day).toMatchObject({ day: new Date().toISOString().slice(0, 10), tokens: 120 });
  });

  it('a call without an owner (histories from before budgets) is not checked or counted', async () => {
    const owner = uniqueId('usr_');
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 80, output: 40 } }]);
    const { owner_id: _dropped, ...legacy } = firstCall(await newRun(owner, script), owner, script);
    await attempt(1, legacy);
    expect(await tokensUsedOn(database.db, owner, new Date())).toBe(0);
  });
});
