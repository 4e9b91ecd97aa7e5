/**
 * Agents using MCP tools end to end: a real worker, the real API, a scripted OpenAI-compatible model, and real MCP
 * servers — the reference server-everything and a failure server written with the SDK (./mcp-test-servers.ts).
 * The model is shown only the selected tools (namespaced), the calls reach the servers with their credentials, and the
 * results come back as tool output. Failure cases: an error result, a destructive tool the step allows called without
 * asking (one that waits for a decision: ./mcp-tool-approval.test.ts), a huge result cut, a result that tries to instruct the model stays a tool message, a non-idempotent tool that outlives its
 * activity is called once and reported to the model, a host outside the egress allowlist is never contacted. The
 * server's token is in no API answer and not in the Temporal history (read with or without the codec).
 */
import { getTranscript, runAgent } from '../helpers/agent-runs';
import { historyText } from '../helpers/history-text';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { readRunEvents } from '../helpers/run-events';
import {
  startTestApi,
  startTestWorker,
  testCodec,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import {
  HUGE_RESULT_BYTES,
  INJECTION_TEXT,
  startEverything,
  startFailureServer,
  type EverythingServer,
  type FailureServer,
} from './mcp-test-servers';

const TOKEN = 'mcp-bearer-3c9a0f51e2';
type Msg = { role: string; content: string };
type ToolSpec = { type: string; function: { name: string } };

describe('agents use MCP tools', () => {
  let llm: LlmServer;
  let everything: EverythingServer;
  let failures: FailureServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;

  beforeAll(async () => {
    [llm, everything, failures] = await Promise.all([startLlmServer(), startEverything(), startFailureServer()]);
    api = await startTestApi(
      testConfig({
        // Loopback servers pass the SSRF guard only when listed, as any private host must be.
        HTTP_ALLOWED_HOSTS: `${everything.host},${failures.host}`,
        OPENAI_API_KEY: 'sk-test-mcp',
        OPENAI_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), everything?.close(), failures?.close()]);
  });

  const register = async (body: Record<string, unknown>) => {
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send(body);
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: { id: string; name: string } }).data;
  };
  const toolNames = (request: { body: Record<string, unknown> }) =>
    ((request.body.tools as ToolSpec[] | undefined) ?? []).map((t) => t.function.name).sort();
  const toolMessages = (request: { body: Record<string, unknown> }) =>
    (request.body.messages as Msg[]).filter((m) => m.role === 'tool');

  it('calls server-everything tools the step selected, shown as <server>__<tool>', async () => {
    const server = await register({ name: 'everything', url: everything.url });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      {
        toolCalls: [
          { name: 'everything__echo', args: { message: 'hello mcp' } },
          { name: 'everything__get-sum', args: { a: 2, b: 40 } },
        ],
      },
      { text: 'the sum is 42' },
    ]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: server.id, include: ['echo', 'get-sum'] }] },
    });
    expect(status.status).toBe('completed');
    expect(status.outputs).toEqual({ ask: 'the sum is 42' });
    // The built-in tool of the template, plus exactly the two selected MCP tools.
    expect(toolNames(script.requests[0]!)).toEqual(['calculator', 'everything__echo', 'everything__get-sum']);
    const results = toolMessages(script.requests[1]!).map((m) => m.content);
    expect(results[0]).toContain('Echo: hello mcp');
    expect(results[1]).toContain('42');
    const transcript = await getTranscript(api, user, runId);
    // The list the model was shown is kept with the step, with each tool's retry class from its annotations.
    const shown = (transcript as unknown as { mcp_tools: { name: string; retry: string }[] }).mcp_tools;
    expect(shown.map((t) => [t.name, t.retry])).toEqual([
      ['everything__echo', 'retry'],
      ['everything__get-sum', expect.any(String)],
    ]);
    const tools = transcript.entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([
      ['everything__echo', false],
      ['everything__get-sum', false],
    ]);
  });

  it('handles failing, destructive, huge and hostile tools; the token reaches the server only', async () => {
    const server = await register({ name: 'ops', url: failures.url, auth: { type: 'bearer', token: TOKEN } });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      {
        toolCalls: [
          { name: 'ops__lookup', args: { key: 'k1' } },
          { name: 'ops__explode', args: {} },
          { name: 'ops__wipe', args: {} },
          { name: 'ops__huge', args: {} },
          { name: 'ops__inject', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const before = failures.calls.length;
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: server.id, exclude: ['charge', 'vanish'], allow_destructive: ['wipe'] }] },
    });
    expect(status.status).toBe('completed');
    expect(toolNames(script.requests[0]!)).toEqual([
      'calculator',
      'ops__explode',
      'ops__huge',
      'ops__inject',
      'ops__lookup',
      'ops__wipe',
    ]);

    const received = failures.calls.slice(before);
    // Each once, the allowed destructive one too (an error result is an answer, not a failure).
    expect(received.map((c) => c.tool).sort()).toEqual(['explode', 'huge', 'inject', 'lookup', 'wipe']);
    for (const call of received) expect(call.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const [lookup, explode, wipe, huge, inject] = toolMessages(script.requests[1]!).map((m) => m.content);
    expect(lookup).toContain('value of k1');
    expect(explode).toContain('the database is on fire');
    expect(wipe).toContain('wiped');
    expect(huge!.length).toBeLessThan(HUGE_RESULT_BYTES / 10);
    expect(inject).toContain(INJECTION_TEXT);
    // The hostile text is a tool result, never part of the instructions.
    const system = (script.requests[1]!.body.messages as Msg[]).filter((m) => m.role === 'system');
    expect(system.map((m) => m.content).join('\n')).not.toContain('SYSTEM OVERRIDE');

    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error, t.truncated])).toEqual([
      ['ops__lookup', false, false],
      ['ops__explode', true, false],
      ['ops__wipe', false, false],
      ['ops__huge', false, true],
      ['ops__inject', false, false],
    ]);

    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    expect(await historyText(history)).not.toContain(TOKEN);
    expect(await historyText(history, testCodec())).not.toContain(TOKEN);
    expect(JSON.stringify(status)).not.toContain(TOKEN);
    const events = await readRunEvents(api.database.db, runId, { afterSeq: 0, counter: 1000, limit: 1000 });
    expect(events.filter((e) => e.type === 'agent.tool_call')).toHaveLength(5);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it('attempts a non-idempotent tool once: outliving its activity, it is reported to the model, not repeated', async () => {
    const server = await register({ name: uniqueId('pay'), url: failures.url, allowed_tools: ['charge'] });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: `${server.name}__charge`, args: { cents: 500 } }] },
      { text: 'could not confirm the charge' },
    ]);
    const before = failures.callsOf('charge').length;
    // The call is held past the step's time limit: its one attempt times out, as when a worker dies mid-call.
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      timeout_seconds: 3,
      max_attempts: 3,
      step: { mcp_tools: [{ server_id: server.id }] },
    });
    expect(status.status).toBe('completed');
    failures.release();
    expect(failures.callsOf('charge').length - before).toBe(1);
    const [result] = toolMessages(script.requests[1]!).map((m) => m.content);
    expect(result).toContain('not repeated');
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([[`${server.name}__charge`, true]]);
  });

  it('a server that disappears mid-call: one attempt, an error result for the model', async () => {
    const server = await register({ name: uniqueId('gone'), url: failures.url, allowed_tools: ['vanish'] });
    const script = llm.script(uniqueId('gpt-mcp-'), [
      { toolCalls: [{ name: `${server.name}__vanish`, args: {} }] },
      { text: 'the message may not have been sent' },
    ]);
    const before = failures.callsOf('vanish').length;
    const { status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      max_attempts: 3,
      step: { mcp_tools: [{ server_id: server.id }] },
    });
    expect(status.status).toBe('completed');
    expect(failures.callsOf('vanish').length - before).toBe(1);
    const [result] = toolMessages(script.requests[1]!).map((m) => m.content);
    expect(result).toContain('not repeated');
  });

  it('never contacts a server outside the step’s egress allowlist; the model sees no tools of it', async () => {
    const server = await register({ name: uniqueId('far'), url: failures.url });
    const script = llm.script(uniqueId('gpt-mcp-'), [{ text: 'no tools' }]);
    const before = failures.calls.length;
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      egress: { http_hosts: ['api.example.com'] },
      step: { mcp_tools: [{ server_id: server.id }] },
    });
    expect(status.status).toBe('completed');
    expect(toolNames(script.requests[0]!)).toEqual(['calculator']);
    expect(failures.calls.length).toBe(before);
    const transcript = await getTranscript(api, user, runId);
    const problems = (transcript as unknown as { mcp_problems: string[] }).mcp_problems;
    expect(problems.join('\n')).toContain("not allowed by the step's egress policy");
  });
});
