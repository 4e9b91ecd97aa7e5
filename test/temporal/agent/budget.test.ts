/**
 * Budgets end to end: workflows created and started through the API, run by the real run workflow on real Temporal
 * with a real worker and MongoDB, against the scripted OpenAI-compatible HTTP server. A run budget (tokens, model
 * calls) counts across all agent steps and stops the run with `budget_exceeded` before the model is called again;
 * the user's daily token budget stops the next agent step. Each case asserts what the model server saw.
 */
import { insertAgentTemplate } from '../../helpers/agent-runs';
import { startLlmServer, type LlmServer, type ModelScript } from '../../helpers/llm-server';
import {
  startTestApi,
  startTestWorker,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus, type StatusBody } from '../../helpers/workflows';
import { tokensUsedOn } from '../../../db/usage';
import type { JsonObject } from '../../../domain/json';

/** Small enough for the daily case to reach quickly; every other case stays far below it (one user per case). */
const TOKENS_PER_DAY = 1_000;
const RUN_MAX_MODEL_CALLS = 40;

interface BudgetBody {
  max_tokens: number;
  max_model_calls: number;
  tokens_used: number;
  model_calls_used: number;
}

describe('run and daily budgets', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: 'sk-test-budget-0123456789',
        OPENAI_BASE_URL: llm.baseUrl,
        USER_MAX_TOKENS_PER_DAY: String(TOKENS_PER_DAY),
        RUN_MAX_MODEL_CALLS: String(RUN_MAX_MODEL_CALLS),
      }),
    );
    worker = await startTestWorker(api.config, api.database);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  /** A workflow of `steps` agent steps on one scripted model, each asking `{{input.question}}`. */
  async function agentWorkflow(user: TestUser, script: ModelScript, steps: number, config: JsonObject = {}) {
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, max_turns: 10 });
    return createWorkflow(api, user, {
      name: 'budget test',
      steps: Array.from({ length: steps }, (_, i) => ({
        id: `ask${i + 1}`,
        template_id: template._id,
        input: '{{input.question}}',
        retry: { max_attempts: 1 },
      })),
      config,
    });
  }

  async function runToEnd(user: TestUser, workflowId: string): Promise<StatusBody> {
    const runId = await startRun(api, user, workflowId, { question: 'What is 6 times 7?' });
    return waitForStatus(api, user, runId, isTerminal, 60_000);
  }

  it('a run that has spent its tokens across steps fails before the next model call', async () => {
    const user = await createTestUser(api.database.db);
    // Step 1 answers with 60 tokens; step 2's first call (a tool call) brings the run to exactly 120 = max_tokens.
    const script = llm.script(uniqueId('gpt-test-'), (_req, n) =>
      n === 0
        ? { text: 'first answer', usage: { input: 50, output: 10 } }
        : { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 50, output: 10 } },
    );
    const workflowId = await agentWorkflow(user, script, 2, { budget: { max_tokens: 120 } });
    const status = await runToEnd(user, workflowId);

    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask2', reason: 'budget_exceeded' });
    expect(status.error?.message).toContain('max_tokens is 120');
    expect(status.budget as BudgetBody).toEqual({
      max_tokens: 120,
      max_model_calls: RUN_MAX_MODEL_CALLS,
      tokens_used: 120,
      model_calls_used: 2,
    });
    expect(status.steps.map((s) => s.status)).toEqual(['completed', 'failed']);
    // The budget was spent after the second call: the model never saw a third.
    expect(script.requests).toHaveLength(2);
  });

  it('a call that pushes the run over its token budget fails the run, even with a final answer', async () => {
    const user = await createTestUser(api.database.db);
    const script = llm.script(uniqueId('gpt-test-'), [{ text: 'expensive answer', usage: { input: 90, output: 60 } }]);
    const workflowId = await agentWorkflow(user, script, 2, { budget: { max_tokens: 100 } });
    const status = await runToEnd(user, workflowId);

    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask1', reason: 'budget_exceeded' });
    expect(status.error?.message).toContain('the run has used 150 tokens');
    expect((status.budget as BudgetBody).tokens_used).toBe(150);
    expect(status.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
    expect(script.requests).toHaveLength(1);
  });

  it('a run stops at max_model_calls although the model keeps asking for tools', async () => {
    const user = await createTestUser(api.database.db);
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '1+1' } }], usage: { input: 5, output: 5 } },
    ]);
    const workflowId = await agentWorkflow(user, script, 1, { budget: { max_model_calls: 3 } });
    const status = await runToEnd(user, workflowId);

    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'ask1', reason: 'budget_exceeded' });
    expect(status.error?.message).toContain('max_model_calls is 3');
    expect(status.budget as BudgetBody).toMatchObject({ max_model_calls: 3, model_calls_used: 3, tokens_used: 30 });
    // max_turns is 10: only the budget stopped the loop.
    expect(script.requests).toHaveLength(3);
  });

  it('a run within its budget completes and shows the default budget with its usage', async () => {
    const user = await createTestUser(api.database.db);
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 11, output: 7 } }]);
    const workflowId = await agentWorkflow(user, script, 1);
    const status = await runToEnd(user, workflowId);
    expect(status.status).toBe('completed');
    expect(status.budget as BudgetBody).toEqual({
      max_tokens: api.config.RUN_MAX_TOKENS,
      max_model_calls: RUN_MAX_MODEL_CALLS,
      tokens_used: 18,
      model_calls_used: 1,
    });
  });

  it('a user over the daily token budget has their next agent step fail without calling the model', async () => {
    const user = await createTestUser(api.database.db);
    const other = await createTestUser(api.database.db);
    const script = llm.script(uniqueId('gpt-test-'), [{ text: 'big answer', usage: { input: 700, output: 400 } }]);
    const workflowId = await agentWorkflow(user, script, 1);

    // The first run may overshoot (the check is before each call); it completes and is counted once.
    const first = await runToEnd(user, workflowId);
    expect(first.status).toBe('completed');
    expect(await tokensUsedOn(api.database.db, user.id, new Date())).toBe(1_100);

    const second = await runToEnd(user, workflowId);
    expect(second.status).toBe('failed');
    expect(second.error).toMatchObject({ step_id: 'ask1', reason: 'budget_exceeded', code: 'budget_exceeded' });
    expect(second.error?.message).toContain(`USER_MAX_TOKENS_PER_DAY is ${TOKENS_PER_DAY}`);
    expect(second.steps[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(script.requests).toHaveLength(1);

    // The budget is per user: another user's step runs.
    const otherScript = llm.script(uniqueId('gpt-test-'), [{ text: 'fine', usage: { input: 5, output: 5 } }]);
    const otherWorkflow = await agentWorkflow(other, otherScript, 1);
    expect((await runToEnd(other, otherWorkflow)).status).toBe('completed');
  });
});
