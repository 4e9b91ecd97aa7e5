/**
 * A worker killed (SIGKILL) while a non-idempotent MCP tool call is in flight: the call's one attempt times out
 * (heartbeat), a new worker records that as the call's error result, the model hears of it, and the MCP server saw the
 * call exactly once — no silent second call.
 */
import { createAgentWorkflow, getTranscript } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

const OPENAI_KEY = 'sk-test-mcp-kill-0123456789';
type Msg = { role: string; content: string };

describe('a worker killed during a non-idempotent MCP call', () => {
  let llm: LlmServer;
  let server: FailureServer;
  let api: TestApi;
  let user: TestUser;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: server.host }),
    );
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await api?.close();
    await Promise.all([llm?.close(), server?.close()]);
  });

  it('is called at most once, and the model is told the outcome is unknown', async () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: server.host };
    const res = await api.http
      .post('/api/v1/mcp-servers')
      .set(user.auth)
      .send({ name: 'pay', url: server.url, allowed_tools: ['charge'] });
    const serverId = (res.body as { data: { id: string } }).data.id;
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: 'pay__charge', args: { cents: 700 } }] },
      { text: 'the charge may not have gone through' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      // Long enough that only the killed worker's lost heartbeat (10 s) can end the call's attempt.
      timeout_seconds: 60,
      max_attempts: 3,
      step: { mcp_tools: [{ server_id: serverId }] },
    });

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const runId = await startRun(api, user, workflowId, { question: 'charge it' });
    await server.waitForCalls('charge', 1, 45_000);
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker(api.config, env);
    workers.push(second);
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);
    expect(status.status).toBe('completed');
    server.release();
    expect(server.callsOf('charge')).toHaveLength(1);

    const result = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(result.content).toContain('did not answer');
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([['pay__charge', true]]);

    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => n !== undefined && n !== null && n !== 'projectStep');
    expect(scheduled.filter((n) => n === 'callMcpTool')).toHaveLength(1);
    expect(scheduled).toContain('recordMcpToolFailure');
  }, 120_000);
});
