/**
 * Destructive MCP tools wait for the owner's decision (docs/mcp.md, decision 0410), end to end: a real worker process,
 * the real API and its `/mcp`, a scripted OpenAI-compatible model and the failure MCP server written with the SDK.
 * The agent step waits with an approval naming the server, the tool and the arguments — in /api/v1/approvals and as
 * an `input_required` task on /mcp and in `stepwise approvals list` —, and the server sees nothing until the decision: approved, the call is made
 * exactly once; rejected, never, and the model hears that the user declined. A worker killed while the step waits
 * changes nothing: the next worker keeps waiting and makes the call once after the approval.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runCli } from '../../cli/run';
import { loadConfig } from '../../config';
import { createAgentWorkflow, getTranscript } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { readRunEvents } from '../helpers/run-events';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { isTerminal, startRun, waitForStatus, type StatusBody } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

const OPENAI_KEY = 'sk-test-mcp-approval-0123456789';
type Msg = { role: string; content: string };
interface Approval {
  run_id: string;
  step_id: string;
  message: string;
  instructions: string | null;
}

describe('destructive MCP tools wait for a decision', () => {
  let llm: LlmServer;
  let server: FailureServer;
  let api: TestApi;
  let base: string;
  let user: TestUser;
  let env: Record<string, string>;
  let worker: WorkerProcess;
  const workers: WorkerProcess[] = [];
  const clients: Client[] = [];

  const startWorker = async (): Promise<WorkerProcess> => {
    const w = spawnWorker(api.config, env);
    workers.push(w);
    await w.ready;
    return w;
  };

  beforeAll(async () => {
    [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
    env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: server.host };
    api = await startTestApi(testConfig(env));
    base = await api.listen();
    user = await createTestUser(api.database.db);
    worker = await startWorker();
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await api?.close();
    await Promise.all([llm?.close(), server?.close()]);
  });

  const register = async (body: Record<string, unknown>) => {
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send(body);
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: { id: string; name: string } }).data;
  };
  const inbox = async (runId: string): Promise<Approval[]> => {
    const res = await api.http.get('/api/v1/approvals').set(user.auth);
    expect(res.status).toBe(200);
    return (res.body as { data: Approval[] }).data.filter((a) => a.run_id === runId);
  };
  /** The run's approvals once listed (the step turns `waiting` just before its approval reaches the inbox). */
  const listed = async (runId: string): Promise<Approval[]> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = await inbox(runId);
      if (found.length > 0) return found;
      if (Date.now() > deadline) throw new Error(`run ${runId}: no approval in the inbox within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const decide = async (runId: string, approved: boolean, comment?: string) => {
    const res = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'ask', approved, ...(comment ? { comment } : {}) });
    expect(res.status).toBe(200);
  };
  const isWaiting = (s: StatusBody) => s.status === 'waiting' || isTerminal(s);
  const toolResults = (request: { body: Record<string, unknown> }) =>
    (request.body.messages as Msg[]).filter((m) => m.role === 'tool').map((m) => m.content);
  const connect = async (): Promise<Client> => {
    const client = new Client({ name: 'stepwise-approval-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${user.key}` } },
      }),
    );
    clients.push(client);
    return client;
  };

  it('waits in the inbox and on /mcp; approved, the tool is called exactly once', async () => {
    const ops = await register({ name: uniqueId('ops'), url: server.url, allowed_tools: ['wipe'] });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: `${ops.name}__wipe`, args: { target: 'staging', note: 'x'.repeat(5000) } }] },
      { text: 'wiped staging' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: ops.id }] },
    });
    const before = server.callsOf('wipe').length;
    const runId = await startRun(api, user, workflowId, { question: 'wipe staging' });

    const waiting = await waitForStatus(api, user, runId, isWaiting);
    expect(waiting.status).toBe('waiting');
    const [approval] = await listed(runId);
    expect(server.callsOf('wipe').length).toBe(before);
    expect(approval).toMatchObject({ step_id: 'ask' });
    expect(approval!.message).toContain(`"wipe" on server "${ops.name}"`);
    expect(approval!.message).toContain('"target":"staging"');
    // The arguments are shown as JSON, cut: a model cannot flood the inbox.
    expect(approval!.message.length).toBeLessThan(1300);
    expect(approval!.message).toContain('characters in all');

    // The CLI's inbox lists it too.
    const out: string[] = [];
    const config = loadConfig({ STEPWISE_URL: base, STEPWISE_API_KEY: user.key });
    expect(
      await runCli(['approvals', 'list', '--json'], config, { out: (l) => out.push(l), err: () => undefined }),
    ).toBe(0);
    expect(out.map((l) => JSON.parse(l) as Approval)).toContainEqual(
      expect.objectContaining({ run_id: runId, step_id: 'ask', message: approval!.message }),
    );

    // An MCP client sees the run as a task that needs input, with the approval's message.
    const client = await connect();
    const task = await client.experimental.tasks.getTask(runId);
    expect(task.status).toBe('input_required');
    expect(task.statusMessage).toContain(`"wipe" on server "${ops.name}"`);

    await decide(runId, true);
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(server.callsOf('wipe').length - before).toBe(1);
    expect(server.callsOf('wipe').at(-1)!.args).toMatchObject({ target: 'staging' });
    expect(toolResults(script.requests[1]!)[0]).toContain('wiped');
    expect(await inbox(runId)).toEqual([]);
    const events = await readRunEvents(api.database.db, runId, { afterSeq: 0, counter: 1000, limit: 1000 });
    expect(events.map((e) => e.type)).toContain('step.waiting');
    expect(events.filter((e) => e.type === 'agent.tool_call')).toHaveLength(1);
  }, 90_000);

  it('rejected: a tool the user marked is never called and the model hears the refusal; allowed ones go ahead', async () => {
    const ops = await register({ name: uniqueId('ops'), url: server.url, allowed_tools: ['lookup', 'wipe'] });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      {
        toolCalls: [
          { name: `${ops.name}__lookup`, args: { key: 'prod' } },
          { name: `${ops.name}__wipe`, args: {} },
        ],
      },
      { text: 'nothing was looked up' },
    ]);
    const marker = uniqueId('key-');
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      // lookup is read-only by its annotations, but the user asks to decide each call; wipe may go without asking.
      step: { mcp_tools: [{ server_id: ops.id, require_approval: ['lookup'], allow_destructive: ['wipe'] }] },
    });
    const lookups = server.callsOf('lookup').length;
    const wipes = server.callsOf('wipe').length;
    const runId = await startRun(api, user, workflowId, { question: marker });

    expect((await waitForStatus(api, user, runId, isWaiting)).status).toBe('waiting');
    const [approval] = await listed(runId);
    expect(approval!.message).toContain(`"lookup" on server "${ops.name}" with arguments {"key":"prod"}`);
    // The allowed destructive call did not wait.
    await server.waitForCalls('wipe', wipes + 1);

    // Declined through /mcp, as an MCP client answers an approval.
    const client = await connect();
    const decided = (await client.callTool({
      name: 'decide_approval',
      arguments: { run_id: runId, step_id: 'ask', approved: false, comment: 'not on prod' },
    })) as CallToolResult;
    expect(decided.isError).toBeFalsy();
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(server.callsOf('lookup').length).toBe(lookups);
    expect(server.callsOf('wipe').length).toBe(wipes + 1);
    const [lookup, wipe] = toolResults(script.requests[1]!);
    expect(lookup).toContain('the user declined');
    expect(lookup).toContain('not on prod');
    expect(wipe).toContain('wiped');
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([
      [`${ops.name}__lookup`, true],
      [`${ops.name}__wipe`, false],
    ]);
  }, 90_000);

  it('a worker killed while the step waits: the next worker still waits, and calls the tool once after approval', async () => {
    const ops = await register({ name: uniqueId('ops'), url: server.url, allowed_tools: ['wipe'] });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: `${ops.name}__wipe`, args: { target: 'cache' } }] },
      { text: 'cache wiped' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      timeout_seconds: 30,
      step: { mcp_tools: [{ server_id: ops.id }] },
    });
    const before = server.callsOf('wipe').length;
    const runId = await startRun(api, user, workflowId, { question: 'wipe the cache' });
    expect((await waitForStatus(api, user, runId, isWaiting)).status).toBe('waiting');

    worker.kill('SIGKILL');
    await worker.exited;
    worker = await startWorker();
    // Nothing moved while no worker ran: still waiting, still in the inbox, the tool not called.
    expect((await waitForStatus(api, user, runId, () => true)).status).toBe('waiting');
    expect(await listed(runId)).toHaveLength(1);
    expect(server.callsOf('wipe').length).toBe(before);
    // The decision is an update: only a worker that has rebuilt the waiting step from history can accept it. Until
    // Temporal hands the run to the new worker (the dead one's sticky queue times out first), the API answers 503
    // and a client tries again; Temporal keeps such an update, so a later try may find it decided already (409).
    const deadline = Date.now() + 60_000;
    for (let tries = 1; ; tries++) {
      const res = await api.http
        .post(`/api/v1/workflows/runs/${runId}/approve`)
        .set(user.auth)
        .send({ step_id: 'ask', approved: true });
      if (res.status === 200 || (res.status === 409 && tries > 1)) break;
      expect(res.status).toBe(503);
      if (Date.now() > deadline) throw new Error('no worker took the decision within 60 s');
    }
    const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    expect(server.callsOf('wipe').length - before).toBe(1);
    expect(toolResults(script.requests[1]!)[0]).toContain('wiped');

    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
    expect(scheduled.filter((n) => n === 'requestMcpApproval')).toHaveLength(1);
    expect(scheduled.filter((n) => n === 'callMcpTool')).toHaveLength(1);
  }, 120_000);
});
