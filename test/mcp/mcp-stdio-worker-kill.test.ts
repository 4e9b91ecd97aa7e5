/**
 * A worker killed (SIGKILL) while a non-idempotent tool of a stdio MCP server is in flight: the call's one attempt
 * times out (heartbeat), a new worker records that as the call's error result, and the server process saw the call
 * exactly once — the new worker launches no second process for it. As test/mcp/mcp-worker-kill.test.ts for HTTP.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAgentWorkflow, getTranscript } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const OPENAI_KEY = 'sk-test-stdio-kill-0123456789';
type Msg = { role: string; content: string };
type LogLine = { event: string; tool?: string; pid: number };

async function waitUntil(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a worker killed during a non-idempotent stdio MCP call', () => {
  let llm: LlmServer;
  let api: TestApi;
  let user: TestUser;
  let dir: string;
  let logFile: string;
  let env: Record<string, string>;
  const workers: WorkerProcess[] = [];
  const readLog = (): LogLine[] => {
    try {
      return readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LogLine);
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    llm = await startLlmServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'stepwise-stdio-kill-'));
    logFile = path.join(dir, 'calls.jsonl');
    const declared = JSON.stringify({
      pay: {
        command: process.execPath,
        args: ['--import', 'tsx', path.join(__dirname, 'stdio-test-server.ts')],
        env: { STDIO_TEST_LOG: logFile },
      },
    });
    env = { OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl, MCP_STDIO_SERVERS: declared };
    api = await startTestApi(testConfig(env));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    // The killed worker's server process, if it outlived its closed stdin (ours only: the pids it logged).
    for (const line of readLog()) {
      try {
        process.kill(line.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await api?.close();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is called at most once, and the model is told the outcome is unknown', async () => {
    const script = llm.script(uniqueId('gpt-stdio-'), [
      { toolCalls: [{ name: 'pay__charge', args: { cents: 700 } }] },
      { text: 'the charge may not have gone through' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      // Long enough that only the killed worker's lost heartbeat (10 s) can end the call's attempt.
      timeout_seconds: 60,
      max_attempts: 3,
      step: { mcp_tools: [{ stdio: 'pay', include: ['charge'] }] },
    });

    const first = spawnWorker(api.config, env);
    workers.push(first);
    await first.ready;
    const runId = await startRun(api, user, workflowId, { question: 'charge it' });
    await waitUntil('the charge call', () => readLog().some((l) => l.tool === 'charge'), 45_000);
    first.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker(api.config, env);
    workers.push(second);
    const status = await waitForStatus(api, user, runId, isTerminal, 90_000);
    expect(status.status).toBe('completed');
    expect(readLog().filter((l) => l.tool === 'charge')).toHaveLength(1);
    // One process for the listing, one for the call: the second worker launched none.
    expect(readLog().filter((l) => l.event === 'start')).toHaveLength(2);

    const result = (script.requests[1]!.body.messages as Msg[]).find((m) => m.role === 'tool')!;
    expect(result.content).toContain('did not answer');
    const tools = (await getTranscript(api, user, runId)).entries.filter((e) => e.role === 'tool');
    expect(tools.map((t) => [t.name, t.is_error])).toEqual([['pay__charge', true]]);

    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => n !== undefined && n !== null);
    expect(scheduled.filter((n) => n === 'callMcpTool')).toHaveLength(1);
    expect(scheduled).toContain('recordMcpToolFailure');
  }, 120_000);
});
