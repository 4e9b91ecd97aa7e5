/**
 * The docs/agents.md "Local models" recipe, as written: no provider key, `LLM_BASE_URL` pointing at an
 * OpenAI-compatible server on the machine and `LLM_DEFAULT_MODEL=compat:<model>`. The server here is the scripted one
 * the test starts (it speaks the same chat-completions API as Ollama, llama.cpp's server and vLLM), so the real
 * provider code runs over HTTP: a template with no model of its own is written without a warning, and its agent step
 * — a tool call, then the answer — runs on the local model, sending no key.
 */
import { DEFAULT_QUESTION } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('agents on a local OpenAI-compatible server (LLM_BASE_URL)', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    llm = await startLlmServer();
    // The recipe's settings, with the test server's URL in place of http://127.0.0.1:11434/v1.
    api = await startTestApi(testConfig({ LLM_BASE_URL: llm.baseUrl, LLM_DEFAULT_MODEL: 'compat:llama3.2' }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  it('runs an agent step with no model of its own on the local model, with its tools, and no key', async () => {
    const model = llm.script('llama3.2', [
      { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }], usage: { input: 20, output: 5 } },
      { text: 'It is 42.', usage: { input: 30, output: 4 } },
    ]);
    const template = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: 'Local helper', default_prompt: 'Answer with the calculator.', default_tools: ['calculator'] });
    expect(template.status).toBe(201);
    expect(template.body.data).toMatchObject({ model: null });
    expect(template.body.data.warnings).toBeUndefined();

    const workflowId = await createWorkflow(api, user, {
      name: 'local model',
      steps: [{ id: 'ask', template_id: template.body.data.id, input: '{{input.question}}' }],
    });
    const runId = await startRun(api, user, workflowId, { question: DEFAULT_QUESTION });
    const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(status).toMatchObject({ status: 'completed', outputs: { ask: 'It is 42.' } });
    expect(status.usage).toEqual({ llm_calls: 2, input_tokens: 50, output_tokens: 9 });

    expect(model.requests).toHaveLength(2);
    for (const request of model.requests) {
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.body.model).toBe('llama3.2');
      expect(request.authorization).toBeUndefined();
    }
  }, 90_000);
});
