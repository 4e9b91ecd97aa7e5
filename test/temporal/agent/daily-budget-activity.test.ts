/**
 * The callModel activity and the user's daily token budget, in MockActivityEnvironment against the real database and
 * the scripted OpenAI-compatible HTTP server: a retried attempt of the same model call (same run, step and seq) is
 * counted once, distinct calls add up, a call at the limit is refused before the model is asked, and each call is
 * recorded with its model, template, workflow and thread.
 */
import type { Database } from '../../../db/client';
import { runsCollection } from '../../../db/runs';
import { tokensUsedOn, usageCallsCollection, usageCollection } from '../../../db/usage';
import type { CallModelInput } from '../../../temporal/activities/agent/types';
import type { LlmServer, ModelScript } from '../../helpers/llm-server';
import { uniqueId } from '../../helpers/stack';
import { firstCall, newAgentRun, startCallModelHarness, type CallModelHarness } from './call-model-fixtures';

const LIMIT = 100;

describe('callModel and the daily token budget', () => {
  let harness: CallModelHarness;
  let llm: LlmServer;
  let database: Database;

  beforeAll(async () => {
    harness = await startCallModelHarness({ USER_MAX_TOKENS_PER_DAY: String(LIMIT) });
    ({ llm, database } = harness);
  });
  afterAll(async () => {
    await harness?.close();
  });

  const newRun = (ownerId: string, script: ModelScript) => newAgentRun(database.db, ownerId, script);
  const attempt = (n: number, req: CallModelInput) => harness.attempt(n, req);

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

  it("records where each call was made: the run's workflow and thread, the step's template, the model", async () => {
    const owner = uniqueId('usr_');
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 7, output: 3 } }]);
    const runId = await newRun(owner, script);
    // A run in a thread (threads are built elsewhere; the count takes the run's thread_id when there is one).
    await runsCollection(database.db).updateOne({ _id: runId }, { $set: { thread_id: 'thr_a' } });
    await attempt(1, firstCall(runId, owner, script));
    const call = await usageCallsCollection(database.db).findOne({ owner_id: owner });
    expect(call).toMatchObject({
      _id: `${owner}:${runId}:ask:2`,
      run_id: runId,
      model: `openai:${script.model}`,
      template_id: 'tpl_x',
      workflow_id: 'wf_x',
      thread_id: 'thr_a',
      input_tokens: 7,
      output_tokens: 3,
    });
    const day = await usageCollection(database.db).findOne({ owner_id: owner });
    expect(Object.values(day!.groups)).toEqual([
      {
        model: `openai:${script.model}`,
        template_id: 'tpl_x',
        workflow_id: 'wf_x',
        input_tokens: 7,
        output_tokens: 3,
        calls: 1,
      },
    ]);
  });
});
