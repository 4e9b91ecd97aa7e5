/**
 * An agent step that waits more than once, as a follower of its events sees it (docs/runs.md "Following a run",
 * decision 0520): a real worker, the real API and its event stream, a scripted OpenAI-compatible model asking for a
 * destructive MCP tool in two turns, and the failure MCP server written with the SDK. Each wait logs its own
 * `step.waiting` naming the tool call, before the decision; each decision a `step.resumed`.
 */
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { readSse, type SseEvent } from '../helpers/sse';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

interface Approval {
  run_id: string;
  step_id: string;
  message: string;
}

describe('an agent step waiting twice', () => {
  let llm: LlmServer;
  let server: FailureServer;
  let api: TestApi;
  let base: string;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: 'sk-test-waits', OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: server.host }),
    );
    base = await api.listen();
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), server?.close()]);
  });

  /** Resolves once `events` (filled as the stream delivers them) has `count` events of `type`. */
  const streamed = async (events: SseEvent[], type: string, count: number): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (events.filter((e) => e.event === type).length < count) {
      if (Date.now() > deadline) throw new Error(`the stream did not show ${count} × ${type} within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const inbox = async (runId: string): Promise<Approval[]> => {
    const res = await api.http.get('/api/v1/approvals').set(user.auth);
    expect(res.status).toBe(200);
    return (res.body as { data: Approval[] }).data.filter((a) => a.run_id === runId);
  };

  it('logs one step.waiting per destructive call, each before its decision, and a step.resumed after it', async () => {
    const ops = await register();
    const wipe = `${ops.name}__wipe`;
    const script = llm.script(uniqueId('gpt-waits-'), [
      { toolCalls: [{ name: wipe, args: { target: 'first' } }] },
      { toolCalls: [{ name: wipe, args: { target: 'second' } }] },
      { text: 'both wiped' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: ops.id }] },
    });
    const runId = await startRun(api, user, workflowId, { question: 'wipe twice' });
    // Followed from the start, as a client does: the stream ends with run.ended.
    const live: SseEvent[] = [];
    const followed = readSse(`${base}/api/v1/workflows/runs/${runId}/events`, {
      headers: { Authorization: `Bearer ${user.key}` },
      onEvent: (e) => live.push(e),
      timeoutMs: 90_000,
    });

    // Each decision is taken only once the stream has shown its wait: the follower learns of each wait before it.
    const wipes = server.callsOf('wipe').length;
    for (const [n, target] of ['first', 'second'].entries()) {
      await streamed(live, 'step.waiting', n + 1);
      const [approval] = await inbox(runId);
      expect(approval!.message).toContain(`"target":"${target}"`);
      const res = await api.http
        .post(`/api/v1/workflows/runs/${runId}/approve`)
        .set(user.auth)
        .send({ step_id: 'ask', approved: true });
      expect(res.status).toBe(200);
      await server.waitForCalls('wipe', wipes + n + 1);
    }
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');

    const stream = await followed;
    expect(stream.status).toBe(200);
    expect(stream.endedByServer).toBe(true);
    const ours = stream.events.filter((e) => e.data.exec_id === 'ask');
    const waits = ours.filter((e) => e.event === 'step.waiting');
    const resumes = ours.filter((e) => e.event === 'step.resumed');
    const models = ours.filter((e) => e.event === 'agent.model_call');
    expect(waits).toHaveLength(2);
    expect(resumes).toHaveLength(2);
    // Each wait names the call it waits for: the model call that asked for it, the call's index, the tool.
    expect(waits.map((e) => e.data.tool_call)).toEqual([
      { transcript_seq: models[0]!.data.transcript_seq, index: 0, name: wipe },
      { transcript_seq: models[1]!.data.transcript_seq, index: 0, name: wipe },
    ]);
    expect(resumes.map((e) => [e.data.tool_call, e.data.approved])).toEqual(waits.map((e) => [e.data.tool_call, true]));
    // In order: each wait after the model call that asked, its resumption before the call's result and the next turn.
    expect(ours.map((e) => e.event).filter((t) => t !== 'step.started' && !t.startsWith('agent.text'))).toEqual([
      'agent.model_call',
      'step.waiting',
      'step.resumed',
      'agent.tool_call',
      'agent.model_call',
      'step.waiting',
      'step.resumed',
      'agent.tool_call',
      'agent.model_call',
      'step.completed',
    ]);
    expect(stream.events.at(-1)!.event).toBe('run.ended');
  }, 120_000);

  it('two destructive calls in one turn: the second waits, listed and shown, while the first is made', async () => {
    const ops = await register();
    const wipe = `${ops.name}__wipe`;
    const script = llm.script(uniqueId('gpt-waits-'), [
      {
        toolCalls: [
          { name: wipe, args: { target: 'first' } },
          { name: wipe, args: { target: 'second' } },
        ],
      },
      { text: 'both wiped' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: ops.id }] },
    });
    const runId = await startRun(api, user, workflowId, { question: 'wipe two at once' });
    const live: SseEvent[] = [];
    const followed = readSse(`${base}/api/v1/workflows/runs/${runId}/events`, {
      headers: { Authorization: `Bearer ${user.key}` },
      onEvent: (e) => live.push(e),
      timeoutMs: 90_000,
    });
    const approve = async () => {
      const res = await api.http
        .post(`/api/v1/workflows/runs/${runId}/approve`)
        .set(user.auth)
        .send({ step_id: 'ask', approved: true });
      expect(res.status).toBe(200);
    };

    await streamed(live, 'step.waiting', 1);
    await approve();
    // The second call's wait and the first call's result (logged after its resumption was written): whichever of
    // the two writes came last, the step waits for the second call, and the inbox lists it.
    await streamed(live, 'step.waiting', 2);
    await streamed(live, 'agent.tool_call', 1);
    const waiting = await waitForStatus(api, user, runId, () => true);
    expect(waiting.status).toBe('waiting');
    expect((await inbox(runId)).map((a) => a.message)).toEqual([expect.stringContaining('"target":"second"')]);
    await approve();
    expect((await waitForStatus(api, user, runId, isTerminal)).status).toBe('completed');

    const ours = (await followed).events.filter((e) => e.data.exec_id === 'ask');
    const calls = (type: string) => ours.filter((e) => e.event === type).map((e) => e.data.tool_call);
    const transcriptSeq = ours.find((e) => e.event === 'agent.model_call')!.data.transcript_seq;
    const asked = [0, 1].map((index) => ({ transcript_seq: transcriptSeq, index, name: wipe }));
    expect(calls('step.waiting')).toEqual(asked);
    // The first call's resumption is logged only when it came before the second wait (else the step went from one
    // wait to the next); the second's always.
    expect(calls('step.resumed').at(-1)).toEqual(asked[1]);
  }, 120_000);

  const register = async () => {
    const res = await api.http
      .post('/api/v1/mcp-servers')
      .set(user.auth)
      .send({ name: uniqueId('ops'), url: server.url, allowed_tools: ['wipe'] });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: { id: string; name: string } }).data;
  };
});
