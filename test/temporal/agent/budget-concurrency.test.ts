/**
 * Run budgets under concurrency (row R12 of the test table in docs/reliability.md), end to end through the API on real Temporal with a real worker,
 * against the scripted OpenAI-compatible HTTP server, which counts the calls that reach the model: an agent map at
 * concurrency 10, parallel agent branches and parallel sub-workflows under `max_model_calls: 3` make exactly 3 calls.
 * And usage counts every call made, also when a map, a sub-workflow or the run fails.
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
import type { JsonObject } from '../../../domain/json';

interface Usage {
  llm_calls: number;
  input_tokens: number;
  output_tokens: number;
}
interface BudgetBody {
  max_tokens: number;
  max_model_calls: number;
  tokens_used: number;
  model_calls_used: number;
}
const usageOf = (s: StatusBody) => s.usage as Usage;
const budgetOf = (s: StatusBody) => s.budget as BudgetBody;
const stepUsage = (s: StatusBody, id: string) =>
  (s.steps.find((x) => x.id === id) as unknown as { usage: Usage } | undefined)?.usage;

describe('run budgets under concurrency', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: 'sk-test-budget-0123456789', OPENAI_BASE_URL: llm.baseUrl }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  /** An agent template on a fresh scripted model that answers every call at once with 10 + 5 tokens. */
  async function answeringAgent(script?: ModelScript) {
    const model = script ?? llm.script(uniqueId('gpt-test-'), [{ text: 'done', usage: { input: 10, output: 5 } }]);
    const template = await insertAgentTemplate(api, user, { model: `openai:${model.model}`, max_turns: 3 });
    return { script: model, template };
  }

  async function runToEnd(workflow: JsonObject, input: JsonObject = {}): Promise<StatusBody> {
    const workflowId = await createWorkflow(api, user, workflow);
    const runId = await startRun(api, user, workflowId, input);
    return waitForStatus(api, user, runId, isTerminal, 60_000);
  }

  const threeCalls = { budget: { max_model_calls: 3 } };

  it('an agent map at concurrency 10 makes exactly max_model_calls calls; the refused items fail', async () => {
    const { script, template } = await answeringAgent();
    const status = await runToEnd(
      {
        name: 'budgeted map',
        steps: [
          {
            id: 'each',
            template_id: template._id,
            input: '{{map.item}}',
            retry: { max_attempts: 1 },
            map: { over: '{{input.items}}', concurrency: 10, on_item_error: 'continue' },
          },
        ],
        config: threeCalls,
      },
      { items: Array.from({ length: 10 }, (_, i) => `question ${i}`) },
    );

    expect(script.requests.length).toBe(3);
    expect(status.status).toBe('completed');
    const results = status.outputs.each as unknown[];
    const refused = results.filter((r) => JSON.stringify(r).includes('budget_exceeded'));
    expect(refused).toHaveLength(7);
    expect(usageOf(status)).toEqual({ llm_calls: 3, input_tokens: 30, output_tokens: 15 });
    expect(stepUsage(status, 'each')).toEqual({ llm_calls: 3, input_tokens: 30, output_tokens: 15 });
    expect(budgetOf(status)).toMatchObject({ max_model_calls: 3, model_calls_used: 3, tokens_used: 45 });
  });

  it('parallel agent branches make exactly max_model_calls calls', async () => {
    const { script, template } = await answeringAgent();
    const branch = (id: string) => ({
      id,
      template_id: template._id,
      input: 'go',
      depends_on: [],
      on_error: 'continue',
      retry: { max_attempts: 1 },
    });
    const status = await runToEnd({
      name: 'budgeted branches',
      steps: [branch('a'), branch('b'), branch('c'), branch('d')],
      config: threeCalls,
    });

    expect(script.requests.length).toBe(3);
    expect(status.steps.map((s) => s.status).sort()).toEqual(['completed', 'completed', 'completed', 'failed']);
    expect(status.steps.find((s) => s.status === 'failed')?.error?.reason).toBe('budget_exceeded');
    expect(usageOf(status).llm_calls).toBe(3);
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 3, tokens_used: 45 });
  });

  it('parallel sub-workflows share their parent run budget: exactly max_model_calls calls in all', async () => {
    const { script, template } = await answeringAgent();
    const branch = (id: string) => ({
      id,
      template_id: template._id,
      input: 'go',
      depends_on: [],
      on_error: 'continue',
      retry: { max_attempts: 1 },
    });
    const child = await createWorkflow(api, user, { name: uniqueId('child'), steps: [branch('x'), branch('y')] });
    const sub = (id: string) => ({ id, workflow_id: child, depends_on: [], on_error: 'continue' });
    const status = await runToEnd({ name: 'budgeted subs', steps: [sub('s1'), sub('s2')], config: threeCalls });

    expect(script.requests.length).toBe(3);
    expect(usageOf(status).llm_calls).toBe(3);
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 3, tokens_used: 45 });
  });

  it('a map that fails on an item keeps the usage of the items before it', async () => {
    const script = llm.script(uniqueId('gpt-test-'), (_req, n) =>
      n === 2 ? { status: 400, message: 'bad request' } : { text: 'ok', usage: { input: 10, output: 5 } },
    );
    const { template } = await answeringAgent(script);
    const status = await runToEnd(
      {
        name: 'failing map',
        steps: [
          {
            id: 'each',
            template_id: template._id,
            input: '{{map.item}}',
            retry: { max_attempts: 1 },
            map: { over: '{{input.items}}', concurrency: 1 },
          },
        ],
      },
      { items: ['a', 'b', 'c', 'd'] },
    );

    expect(status.status).toBe('failed');
    expect(script.requests.length).toBe(3);
    expect(stepUsage(status, 'each')).toEqual({ llm_calls: 2, input_tokens: 20, output_tokens: 10 });
    expect(usageOf(status)).toEqual({ llm_calls: 2, input_tokens: 20, output_tokens: 10 });
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 2, tokens_used: 30 });
  });

  it('a map that fails on its budget counts the calls it made', async () => {
    const { script, template } = await answeringAgent();
    const status = await runToEnd(
      {
        name: 'map over budget',
        steps: [
          {
            id: 'each',
            template_id: template._id,
            input: '{{map.item}}',
            retry: { max_attempts: 1 },
            map: { over: '{{input.items}}', concurrency: 1 },
          },
        ],
        config: { budget: { max_model_calls: 2 } },
      },
      { items: ['a', 'b', 'c', 'd'] },
    );

    expect(status.status).toBe('failed');
    expect(status.error?.reason).toBe('budget_exceeded');
    expect(script.requests.length).toBe(2);
    expect(stepUsage(status, 'each')?.llm_calls).toBe(2);
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 2, tokens_used: 30 });
  });

  it("a map that goes on after a failed item counts that item's calls", async () => {
    // The item `stuck` keeps asking for tools: with max_turns 1 it fails (turn_limit) after one call.
    const script = llm.script(uniqueId('gpt-test-'), (req) =>
      JSON.stringify(req.body.messages).includes('stuck')
        ? { toolCalls: [{ name: 'calculator', args: { expression: '1+1' } }], usage: { input: 10, output: 5 } }
        : { text: 'ok', usage: { input: 10, output: 5 } },
    );
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, max_turns: 1 });
    const status = await runToEnd(
      {
        name: 'map going on',
        steps: [
          {
            id: 'each',
            template_id: template._id,
            input: '{{map.item}}',
            retry: { max_attempts: 1 },
            map: { over: '{{input.items}}', concurrency: 1, on_item_error: 'continue' },
          },
        ],
      },
      { items: ['a', 'stuck', 'c'] },
    );

    expect(status.status).toBe('completed');
    expect(JSON.stringify((status.outputs.each as unknown[])[1])).toContain('turn_limit');
    expect(script.requests.length).toBe(3);
    expect(stepUsage(status, 'each')).toEqual({ llm_calls: 3, input_tokens: 30, output_tokens: 15 });
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 3, tokens_used: 45 });
  });

  it('a failed sub-workflow passes the usage of its calls to its parent', async () => {
    const script = llm.script(uniqueId('gpt-test-'), (_req, n) =>
      n === 1 ? { status: 400, message: 'bad request' } : { text: 'ok', usage: { input: 10, output: 5 } },
    );
    const { template } = await answeringAgent(script);
    const step = (id: string) => ({ id, template_id: template._id, input: 'go', retry: { max_attempts: 1 } });
    const child = await createWorkflow(api, user, { name: uniqueId('child'), steps: [step('x'), step('y')] });
    const status = await runToEnd({ name: 'failing sub', steps: [{ id: 'sub', workflow_id: child }] });

    expect(status.status).toBe('failed');
    expect(script.requests.length).toBe(2);
    expect(stepUsage(status, 'sub')).toEqual({ llm_calls: 1, input_tokens: 10, output_tokens: 5 });
    expect(budgetOf(status)).toMatchObject({ model_calls_used: 1, tokens_used: 15 });
  });
});
