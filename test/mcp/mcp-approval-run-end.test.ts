/**
 * The approvals inbox holds only what can still be decided (issue 44, item 4): a run that times out
 * (`config.timeout_seconds`) or is cancelled while a destructive MCP call waits for a decision takes its approval off
 * `GET /api/v1/approvals` and `/mcp` `list_approvals` as it ends — the run's end (db/run-end.ts) clears the inbox
 * for agent steps as for approval steps. Real API and worker on real Temporal, a scripted OpenAI-compatible model and
 * the failure MCP server written with the SDK.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';
import type { JsonObject } from '../../domain/json';

describe('an MCP approval ends with its run', () => {
  let llm: LlmServer;
  let server: FailureServer;
  let api: TestApi;
  let worker: TestWorker;
  let base: string;
  let user: TestUser;
  let client: Client;

  beforeAll(async () => {
    [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: 'sk-test-mcp-run-end-0123456789',
        OPENAI_BASE_URL: llm.baseUrl,
        HTTP_ALLOWED_HOSTS: server.host,
      }),
    );
    base = await api.listen();
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    client = new Client({ name: 'stepwise-run-end-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${user.key}` } },
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), server?.close()]);
  });

  const inboxHas = async (runId: string) => {
    const res = await api.http.get('/api/v1/approvals').set(user.auth);
    expect(res.status).toBe(200);
    return (res.body as { data: { run_id: string }[] }).data.some((a) => a.run_id === runId);
  };
  const mcpListHas = async (runId: string) =>
    JSON.stringify(await client.callTool({ name: 'list_approvals', arguments: {} })).includes(runId);

  /** A run whose agent step waits for a decision on a destructive call, listed in the inbox. */
  async function waitingRun(config: JsonObject = {}): Promise<string> {
    const ops = (
      await api.http
        .post('/api/v1/mcp-servers')
        .set(user.auth)
        .send({ name: uniqueId('ops'), url: server.url, allowed_tools: ['wipe'] })
        .expect(201)
    ).body.data as { id: string; name: string };
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: `${ops.name}__wipe`, args: { target: 'staging' } }] },
      { text: 'wiped' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: ops.id }] },
      workflow_config: config,
    });
    const runId = await startRun(api, user, workflowId, { question: 'wipe staging' });
    const deadline = Date.now() + 30_000;
    while (!(await inboxHas(runId))) {
      if (Date.now() > deadline) throw new Error(`run ${runId}: no approval listed within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await mcpListHas(runId)).toBe(true);
    return runId;
  }

  it('a cancelled run takes its approval off the inbox and /mcp', async () => {
    const runId = await waitingRun();
    await api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(user.auth).send({}).expect(202);
    expect((await waitForStatus(api, user, runId, isTerminal)).status).toBe('cancelled');
    expect(await inboxHas(runId)).toBe(false);
    expect(await mcpListHas(runId)).toBe(false);
  });

  it('a run that times out takes its approval off the inbox and /mcp', async () => {
    const runId = await waitingRun({ timeout_seconds: 3 });
    expect((await waitForStatus(api, user, runId, isTerminal, 60_000)).status).toBe('timed_out');
    expect(await inboxHas(runId)).toBe(false);
    expect(await mcpListHas(runId)).toBe(false);
  });
});
