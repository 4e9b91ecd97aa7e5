/**
 * An MCP server's credentials stay with the origin they were given for and out of everything the server says, on the
 * real stack (API, worker, Temporal, a scripted model) with real MCP servers on 127.0.0.1 — two failure servers on
 * two ports standing for two origins, and a server that quotes the credentials it receives:
 * - a PATCH that moves a server to another origin needs `auth` again (or `auth: null`), so a re-pointed URL never
 *   receives the old token (decision 0403);
 * - a run that started on origin A and waited for an approval while the server moved to B with a new token makes no
 *   call: not to A with B's token, not to B;
 * - a server quoting its token (a listing error, a tool description, a tool result) has it replaced by `[redacted]`
 *   in the transcript, the step's status, the run's events and Temporal's history;
 * - what left MCP tools out is in the step's status (`mcp_problems`) and a `step.warning` event, and a local server
 *   missing from HTTP_ALLOWED_HOSTS is told so;
 * - a server that templates or workflows still name cannot be deleted (409 naming them).
 */
import { getTranscript, insertAgentTemplate, runAgent } from '../helpers/agent-runs';
import { historyText } from '../helpers/history-text';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { openApiChecker } from '../helpers/openapi';
import { readRunEvents } from '../helpers/run-events';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus, type StatusBody } from '../helpers/workflows';
import { startEchoServer, startFailureServer, type EchoServer, type FailureServer } from './mcp-test-servers';

const TOKEN_A = 'tok-origin-a-5e81c0d2f7';
const TOKEN_B = 'tok-origin-b-93aa6b14c8';
const ECHO_TOKEN = 'echo-secret-7c2d90e4ab';
const ECHO_KEY = 'key-with "quotes" 4411';
type Msg = { role: string; content: string };
type StepWithProblems = StatusBody['steps'][number] & { mcp_problems: string[] };

describe('MCP server credentials', () => {
  let llm: LlmServer;
  let a: FailureServer;
  let b: FailureServer;
  let echo: EchoServer;
  let unlisted: FailureServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    [llm, a, b, echo, unlisted] = await Promise.all([
      startLlmServer(),
      startFailureServer(),
      startFailureServer(),
      startEchoServer(),
      startFailureServer(),
    ]);
    api = await startTestApi(
      testConfig({
        // `unlisted` is left out on purpose: a local server the operator has not allowed.
        HTTP_ALLOWED_HOSTS: [a.host, b.host, echo.host].join(','),
        OPENAI_API_KEY: 'sk-test-mcp-creds',
        OPENAI_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), a?.close(), b?.close(), echo?.close(), unlisted?.close()]);
  });

  const register = async (body: Record<string, unknown>) => {
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send(body);
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: { id: string; name: string } }).data;
  };
  const patch = async (id: string, body: Record<string, unknown>) => {
    const res = await api.http.patch(`/api/v1/mcp-servers/${id}`).set(user.auth).send(body);
    oas.check(res);
    return res;
  };
  const toolResults = (request: { body: Record<string, unknown> }) =>
    (request.body.messages as Msg[]).filter((m) => m.role === 'tool').map((m) => m.content);
  const events = (runId: string) => readRunEvents(api.database.db, runId, { afterSeq: 0, counter: 1000, limit: 1000 });

  it('a move to another origin needs auth again; the old token never reaches the new host', async () => {
    const server = await register({ name: uniqueId('mv'), url: a.url, auth: { type: 'bearer', token: TOKEN_A } });

    const moved = await patch(server.id, { url: b.url });
    expect(moved.status).toBe(400);
    expect(moved.headers['x-error-code']).toBe('auth_required');
    expect(moved.body.error).toContain("auth: required when the url's origin changes");
    expect(moved.body.error).toContain('auth: null');
    const kept = await api.http.get(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
    expect(kept.body.data).toMatchObject({ url: a.url, auth: { type: 'bearer' } });

    // The same origin, another path: the credentials stay.
    const samePlace = await patch(server.id, { url: `${a.url}?v=2` });
    expect(samePlace.status).toBe(200);
    expect(samePlace.body.data).toMatchObject({ auth: { type: 'bearer' } });

    // auth: null drops them with the move; a server without credentials moves freely.
    const dropped = await patch(server.id, { url: b.url, auth: null });
    expect(dropped.status).toBe(200);
    expect(dropped.body.data).toMatchObject({ url: b.url, auth: { type: 'none' } });
    expect((await patch(server.id, { url: a.url })).status).toBe(200);

    // Moving with new credentials: the next run sends the new token to the new host, and nothing to the old one.
    const renewed = await patch(server.id, { url: b.url, auth: { type: 'bearer', token: TOKEN_B } });
    expect(renewed.status).toBe(200);
    const script = llm.script(uniqueId('gpt-mv-'), [
      { toolCalls: [{ name: `${server.name}__lookup`, args: { key: 'k' } }] },
      { text: 'done' },
    ]);
    const [beforeA, beforeB] = [a.calls.length, b.calls.length];
    const { status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: server.id, include: ['lookup'] }] },
    });
    expect(status.status).toBe('completed');
    expect(a.calls.length).toBe(beforeA);
    expect(b.calls.slice(beforeB).map((c) => c.headers.authorization)).toEqual([`Bearer ${TOKEN_B}`]);
  });

  it('a run that waited while the server moved makes no call with the new token', async () => {
    const server = await register({
      name: uniqueId('wait'),
      url: a.url,
      auth: { type: 'bearer', token: TOKEN_A },
      allowed_tools: ['wipe'],
    });
    const script = llm.script(uniqueId('gpt-wait-'), [
      { toolCalls: [{ name: `${server.name}__wipe`, args: { target: 'staging' } }] },
      { text: 'could not wipe' },
    ]);
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}` });
    const workflowId = await createWorkflow(api, user, {
      name: uniqueId('wait'),
      steps: [
        {
          id: 'ask',
          template_id: template._id,
          input: '{{input.question}}',
          mcp_tools: [{ server_id: server.id }],
        },
      ],
    });
    const [beforeA, beforeB] = [a.callsOf('wipe').length, b.callsOf('wipe').length];
    const runId = await startRun(api, user, workflowId, { question: 'wipe staging' });
    const waiting = await waitForStatus(api, user, runId, (s) => s.status === 'waiting' || isTerminal(s));
    expect(waiting.status).toBe('waiting');

    // Meanwhile the server moves to B with B's token.
    expect((await patch(server.id, { url: b.url, auth: { type: 'bearer', token: TOKEN_B } })).status).toBe(200);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await api.http
        .post(`/api/v1/workflows/runs/${runId}/approve`)
        .set(user.auth)
        .send({ step_id: 'ask', approved: true });
      if (res.status === 200) break;
      // The approval reaches the inbox just after the step turns waiting.
      if (Date.now() > deadline) throw new Error(`approve: ${res.status} ${JSON.stringify(res.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');

    // The run kept URL A; the credentials are B's now: nothing is sent, to A or to B.
    expect(a.callsOf('wipe').length).toBe(beforeA);
    expect(b.callsOf('wipe').length).toBe(beforeB);
    const [result] = toolResults(script.requests[1]!);
    expect(result).toContain('moved since this run started');
    expect(result).not.toContain(TOKEN_B);
  });

  it('takes the credentials out of whatever the server says: listing errors, descriptions, results', async () => {
    const quoting = await register({
      name: uniqueId('echo'),
      url: echo.url,
      auth: { type: 'headers', headers: { Authorization: `Bearer ${ECHO_TOKEN}`, 'X-Api-Key': ECHO_KEY } },
    });
    const failing = await register({
      name: uniqueId('echofail'),
      url: echo.failingListUrl,
      auth: { type: 'bearer', token: ECHO_TOKEN },
    });
    const script = llm.script(uniqueId('gpt-echo-'), [
      { toolCalls: [{ name: `${quoting.name}__whoami`, args: {} }] },
      { text: 'done' },
    ]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: quoting.id }, { server_id: failing.id }] },
    });
    expect(status.status).toBe('completed');

    // The listing's error is kept, with the token out of it, in the transcript, the step's status and an event.
    const transcript = await getTranscript(api, user, runId);
    const problems = (transcript as unknown as { mcp_problems: string[] }).mcp_problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`MCP server ${failing.name}: its tools could not be listed`);
    expect(problems[0]).toContain('access denied for authorization=[redacted]');
    expect((status.steps[0] as StepWithProblems).mcp_problems).toEqual(problems);
    const logged = await events(runId);
    const warning = logged.find((e) => e.type === 'step.warning');
    expect(JSON.parse(warning!.data_json)).toMatchObject({ step_id: 'ask', source: 'mcp_tools', problems });

    // What the model was shown and given back.
    const shown = JSON.stringify(script.requests[0]!.body.tools);
    expect(shown).toContain('Says who you are (authorization=[redacted] x-api-key=[redacted])');
    const [result] = toolResults(script.requests[1]!);
    expect(result).toContain('you sent authorization=[redacted] x-api-key=[redacted]');

    const everywhere = [
      JSON.stringify(script.requests),
      JSON.stringify(transcript),
      JSON.stringify(status),
      JSON.stringify(logged),
      await historyText(await api.temporal.workflow.getHandle(runId).fetchHistory()),
    ].join('\n');
    expect(everywhere).not.toContain(ECHO_TOKEN);
    expect(everywhere).not.toContain('4411');
  });

  it('a local server not in HTTP_ALLOWED_HOSTS: the step says which setting to change', async () => {
    const local = await register({ name: uniqueId('local'), url: unlisted.url });
    const script = llm.script(uniqueId('gpt-local-'), [{ text: 'no tools' }]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: local.id }] },
    });
    expect(status.status).toBe('completed');
    expect(unlisted.calls).toHaveLength(0);
    const [problem] = (status.steps[0] as StepWithProblems).mcp_problems;
    expect(problem).toContain(`MCP server ${local.name}: its tools could not be listed`);
    expect(problem).toContain('non-public address (loopback)');
    expect(problem).toContain("add 127.0.0.1 (or 127.0.0.1:<port>) to the worker's HTTP_ALLOWED_HOSTS");
    const logged = await events(runId);
    const types = logged.map((e) => e.type);
    // After the step's start, before its model call.
    expect(types.indexOf('step.warning')).toBeGreaterThan(types.indexOf('step.started'));
    expect(types.indexOf('step.warning')).toBeLessThan(types.indexOf('agent.model_call'));
    const warning = JSON.parse(logged.find((e) => e.type === 'step.warning')!.data_json) as { problems: string[] };
    expect(warning.problems).toEqual([problem]);
  });

  it('refuses to delete a server that templates or workflows name, naming them', async () => {
    const server = await register({ name: uniqueId('used'), url: a.url });
    const templateName = uniqueId('Uses MCP ');
    const created = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({
        name: templateName,
        default_prompt: 'Use the tools.',
        model: 'openai:gpt-4o-mini',
        mcp_tools: [{ server_id: server.id }],
      });
    expect(created.status).toBe(201);
    const templateId = (created.body as { data: { id: string } }).data.id;
    const plain = await insertAgentTemplate(api, user, { model: 'openai:gpt-4o-mini' });
    const workflowName = uniqueId('uses mcp');
    const workflowId = await createWorkflow(api, user, {
      name: workflowName,
      steps: [{ id: 'ask', template_id: plain._id, mcp_tools: [{ server_id: server.id }] }],
    });

    const refused = await api.http.delete(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
    oas.check(refused);
    expect(refused.status).toBe(409);
    expect(refused.headers['x-error-code']).toBe('mcp_server_in_use');
    expect(refused.body.error).toBe(
      `MCP server "${server.name}" is used by the mcp_tools of templates "${templateName}" and workflows ` +
        `"${workflowName}"; remove it from them first, then delete it`,
    );
    expect((await api.http.get(`/api/v1/mcp-servers/${server.id}`).set(user.auth)).status).toBe(200);

    // Once nothing names it, it goes.
    const untemplated = await api.http.patch(`/api/v1/agents/${templateId}`).set(user.auth).send({ mcp_tools: [] });
    expect(untemplated.status).toBe(200);
    const unworkflowed = await api.http
      .patch(`/api/v1/workflows/${workflowId}`)
      .set(user.auth)
      .send({ steps: [{ id: 'ask', template_id: plain._id }] });
    expect(unworkflowed.status).toBe(200);
    const deleted = await api.http.delete(`/api/v1/mcp-servers/${server.id}`).set(user.auth);
    oas.check(deleted);
    expect(deleted.status).toBe(200);
  });
});
