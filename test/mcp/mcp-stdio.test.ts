/**
 * Local stdio MCP servers the operator declares in MCP_STDIO_SERVERS (docs/mcp.md "Local stdio servers", decision
 * 0420), against a real worker process (so its environment holds real secrets) and real servers it launches: the
 * reference server-everything in stdio mode and a failure server written with the SDK (./stdio-test-server.ts).
 * Users select a declared server by name; the API refuses any other name and lists the declared ones without their
 * commands; the child sees the operator's env, never the worker's; a call that hangs ends with the process killed and
 * the model told, the call made once; a call marked require_approval waits for a decision; a command that cannot start
 * is a listing problem, not a failed step.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAgentWorkflow, getTranscript, runAgent } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, TEST_PAYLOAD_CODEC_KEYS, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const OPENAI_KEY = 'sk-test-stdio-5f1e2d3c4b5a';
const MARKER = 'operator-given-7d41';
type Msg = { role: string; content: string };
type ToolSpec = { type: string; function: { name: string } };
type LogLine = { event: string; tool?: string; pid: number };

const ROOT = path.resolve(__dirname, '..', '..');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('stdio MCP servers the operator declares', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: WorkerProcess;
  let user: TestUser;
  let dir: string;
  let logFile: string;
  const readLog = (): LogLine[] =>
    existsSync(logFile)
      ? readFileSync(logFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as LogLine)
      : [];

  beforeAll(async () => {
    llm = await startLlmServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'stepwise-stdio-'));
    logFile = path.join(dir, 'calls.jsonl');
    const declared = JSON.stringify({
      everything: {
        command: process.execPath,
        args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
        env: { STDIO_MARKER: MARKER },
      },
      probe: {
        command: process.execPath,
        args: ['--import', 'tsx', path.join(__dirname, 'stdio-test-server.ts')],
        env: { STDIO_TEST_LOG: logFile },
        allowed_tools: ['note', 'charge', 'hang'],
      },
      broken: { command: path.join(dir, 'no-such-command') },
    });
    const env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, MCP_STDIO_SERVERS: declared };
    api = await startTestApi(testConfig(env));
    worker = spawnWorker(api.config, env);
    await worker.ready;
    user = await createTestUser(api.database.db);
  }, 60_000);
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await worker?.exited;
    // Any server process a failed test left behind (ours only: the pids it logged).
    if (logFile) for (const line of readLog()) if (isAlive(line.pid)) process.kill(line.pid, 'SIGKILL');
    await api?.close();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the declared servers by name, never their commands or environments', async () => {
    const res = await api.http.get('/api/v1/mcp-servers/stdio').set(user.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { name: 'broken', allowed_tools: null },
        { name: 'everything', allowed_tools: null },
        { name: 'probe', allowed_tools: ['note', 'charge', 'hang'] },
      ],
      error: null,
    });
    expect((await api.http.get('/api/v1/mcp-servers/stdio')).status).toBe(401);
  });

  it('refuses a name the operator did not declare, and a selection naming both kinds', async () => {
    const template = { name: uniqueId('stdio '), default_prompt: 'p', model: 'openai:gpt-4o-mini' };
    const unknown = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ ...template, mcp_tools: [{ stdio: 'shell' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain(
      'mcp_tools[0].stdio: unknown stdio MCP server "shell" (declared: broken, everything, probe',
    );
    const both = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ ...template, mcp_tools: [{ stdio: 'probe', server_id: 'mcp_x' }] });
    expect(both.status).toBe(400);
    expect(both.body.error).toContain('mcp_tools[0]: either {server_id}');
  });

  it('runs server-everything over stdio for an agent; the child sees the operator’s env, not the worker’s', async () => {
    const script = llm.script(uniqueId('gpt-stdio-'), [
      {
        toolCalls: [
          { name: 'everything__echo', args: { message: 'hello stdio' } },
          { name: 'everything__get-env', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const { runId, status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ stdio: 'everything', include: ['echo', 'get-env'] }, { stdio: 'broken' }] },
    });
    expect(status.status).toBe('completed');
    const names = ((script.requests[0]!.body.tools as ToolSpec[]) ?? []).map((t) => t.function.name).sort();
    expect(names).toEqual(['calculator', 'everything__echo', 'everything__get-env']);

    const results = (script.requests[1]!.body.messages as Msg[]).filter((m) => m.role === 'tool');
    expect(results[0]!.content).toContain('Echo: hello stdio');
    const env = results[1]!.content;
    expect(env).toContain(MARKER);
    expect(env).toContain('PATH');
    for (const secret of [OPENAI_KEY, api.config.MONGODB_URI, TEST_PAYLOAD_CODEC_KEYS.split(':')[1]!]) {
      expect(env).not.toContain(secret);
    }
    for (const name of ['MONGODB_URI', 'PAYLOAD_CODEC_KEYS', 'OPENAI_API_KEY', 'TEMPORAL_ADDRESS']) {
      expect(env).not.toContain(name);
    }

    const transcript = await getTranscript(api, user, runId);
    expect(transcript.entries.filter((e) => e.role === 'tool').map((t) => [t.name, t.is_error])).toEqual([
      ['everything__echo', false],
      ['everything__get-env', false],
    ]);
    // A command that cannot start leaves its tools out and says why; the step goes on with the others.
    expect(JSON.stringify(transcript.mcp_problems)).toContain('MCP server broken: its tools could not be listed');
    expect(JSON.stringify(transcript.mcp_problems)).toContain('could not be started (ENOENT)');
  }, 90_000);

  it('shows only allowed tools; a call marked require_approval waits for a decision, then is made once', async () => {
    const script = llm.script(uniqueId('gpt-stdio-'), [
      { toolCalls: [{ name: 'probe__note', args: { text: 'approved note' } }] },
      { text: 'noted' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ stdio: 'probe', require_approval: ['note'] }] },
    });
    const notes = () => readLog().filter((l) => l.event === 'call' && l.tool === 'note').length;
    const before = notes();
    const runId = await startRun(api, user, workflowId, { question: 'take a note' });
    const waiting = await waitForStatus(api, user, runId, (s) => s.status === 'waiting' || isTerminal(s));
    expect(waiting.status).toBe('waiting');
    expect(notes()).toBe(before);
    // The declaration's allowed_tools, applied by the worker that launched the server, leaves `forbidden` out.
    const shown = ((script.requests[0]!.body.tools as ToolSpec[]) ?? []).map((t) => t.function.name).sort();
    expect(shown).toEqual(['calculator', 'probe__charge', 'probe__hang', 'probe__note']);
    const inbox = await api.http.get('/api/v1/approvals').set(user.auth);
    const approval = (inbox.body as { data: { run_id: string; message: string }[] }).data.find(
      (a) => a.run_id === runId,
    );
    expect(approval?.message).toContain('"note" on server "probe"');
    const decided = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'ask', approved: true });
    expect(decided.status).toBe(200);
    const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    expect(notes()).toBe(before + 1);
    const result = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(result.content).toContain('noted: approved note');
  }, 90_000);

  it('kills a server whose call outlives its time limit; the call was made once and the model is told', async () => {
    const script = llm.script(uniqueId('gpt-stdio-'), [
      { toolCalls: [{ name: 'probe__hang', args: {} }] },
      { text: 'it did not answer' },
    ]);
    const { status } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      timeout_seconds: 6,
      max_attempts: 3,
      step: { mcp_tools: [{ stdio: 'probe', include: ['hang'] }] },
    });
    expect(status.status).toBe('completed');
    const calls = readLog().filter((l) => l.event === 'call' && l.tool === 'hang');
    expect(calls).toHaveLength(1);
    // The process ignores SIGTERM and its stdin closing: only the session's SIGKILL ends it.
    await waitUntil(`server process ${calls[0]!.pid} gone`, () => !isAlive(calls[0]!.pid), 20_000);
    const result = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(result.content).toContain('not repeated');
  }, 90_000);
});

describe('stdio MCP servers, off (MCP_STDIO_SERVERS unset)', () => {
  let api: TestApi;
  let user: TestUser;
  beforeAll(async () => {
    api = await startTestApi(testConfig());
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('lists none and refuses every stdio selection with a 400 that says they are off', async () => {
    const list = await api.http.get('/api/v1/mcp-servers/stdio').set(user.auth);
    expect(list.body).toEqual({ data: [], error: null });
    const template = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: uniqueId('stdio '), default_prompt: 'p', mcp_tools: [{ stdio: 'everything' }] });
    expect(template.status).toBe(400);
    expect(template.body).toEqual({
      data: null,
      error: expect.stringContaining(
        'mcp_tools[0].stdio: unknown stdio MCP server "everything": stdio servers are off (the operator declares them in MCP_STDIO_SERVERS)',
      ),
    });
    const agent = await api.http
      .post('/api/v1/agents')
      .set(user.auth)
      .send({ name: uniqueId('plain '), default_prompt: 'p' });
    expect(agent.status).toBe(201);
    const workflow = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: uniqueId('wf '),
        steps: [{ id: 'ask', template_id: agent.body.data.id, mcp_tools: [{ stdio: 'everything' }] }],
      });
    expect(workflow.status).toBe(400);
    expect(workflow.body.error).toContain('steps[0] (ask).mcp_tools[0].stdio: unknown stdio MCP server "everything"');
  });
});
