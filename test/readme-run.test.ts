/**
 * The README's shell examples as a newcomer pastes them, on a fresh `npm run dev` stack: the banner's `export` lines,
 * then every shell block from "A first run" on (the block that starts servers is run the way it says, each line in
 * its own terminal), pasted twice (the second paste must change nothing and fail nowhere), then the cases that must
 * stop with the API's message. The only edit: the MCP server's port 3001 becomes a free one, as every server a test
 * starts does; the stack's own ports are moved by its settings, and the export lines carry them.
 * Agents run on a scripted OpenAI-compatible server the stack finds like a local Ollama; the MCP server is the
 * reference server-everything, started by the README's own command line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../db/client';
import { findUserByName } from '../db/users';
import { freePort, isPortOpen, waitFor } from '../devstack/process';
import {
  exportLines,
  killLeftovers,
  startDev,
  stopAndExpectNothingLeft,
  waitUntilRunning,
  type DevRun,
} from './helpers/dev-stack';
import { startLlmServer, type LlmServer, type RecordedRequest } from './helpers/llm-server';
import { repoRoot } from './helpers/run-node';
import { uniqueId } from './helpers/stack';

jest.setTimeout(600_000);

interface Pasted {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` in bash in the repository's folder, as lines pasted into a terminal there would run. */
function paste(script: string, env: Record<string, string> = {}): Promise<Pasted> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-s'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(script);
  });
}

/** The shell blocks of `text` after `heading`. */
function shellBlocksAfter(text: string, heading: string): string[] {
  const rest = text.slice(text.indexOf(heading));
  return [...rest.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The model behind the MCP example: calls `everything__echo` with the step's input, then answers with its result. */
function echoScript(request: RecordedRequest) {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const tool = messages.find((m) => m.role === 'tool');
  if (tool) {
    const echoed = /Echo: [^"\\]*/.exec(JSON.stringify(tool.content))?.[0] ?? 'nothing';
    return { text: `The echo tool returned: ${echoed}` };
  }
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return { toolCalls: [{ name: 'everything__echo', args: { message: String(user?.content) } }] };
}

describe('the README, pasted on a fresh stack', () => {
  const runs: DevRun[] = [];
  let dir: string;
  let llm: LlmServer;
  let mcpServer: ChildProcess | undefined;
  let readme: string;
  let run: DevRun;
  let exportsScript: string;
  let ports: Record<string, number>;
  let allowed: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-readme-'));
    const mcpPort = await freePort();
    readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8').replaceAll('3001', String(mcpPort));

    // The block that starts the servers: the MCP server's line as written, the stack's setting taken from its line.
    const serverLine = /^(PORT=\d+ npx mcp-server-everything streamableHttp)\b/m.exec(readme)?.[1];
    allowed = /^HTTP_ALLOWED_HOSTS=(\S+) npm run dev\b/m.exec(readme)?.[1] ?? '';
    expect({ serverLine, allowed }).toEqual({ serverLine: expect.any(String), allowed: `127.0.0.1:${mcpPort}` });
    mcpServer = spawn('bash', ['-c', serverLine!], { cwd: repoRoot, detached: true, stdio: 'ignore' });
    await waitFor('server-everything to listen', () => isPortOpen(mcpPort), { timeoutMs: 60_000, intervalMs: 200 });

    llm = await startLlmServer();
    llm.script('llama3.2', (request) => echoScript(request));
    ports = {
      API_PORT: await freePort(),
      DEV_TEMPORAL_PORT: await freePort(),
      DEV_TEMPORAL_UI_PORT: await freePort(),
      DEV_MONGODB_PORT: await freePort(),
    };
    run = startDev(
      {
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        DEV_STATE_DIR: path.join(dir, 'state'),
        DEV_LOCAL_LLM_URLS: llm.baseUrl,
        HTTP_ALLOWED_HOSTS: allowed,
      },
      runs,
    );
    await waitUntilRunning(run);
    exportsScript = exportLines(run).join('\n');
  });

  afterAll(async () => {
    killLeftovers(runs);
    if (mcpServer?.pid && mcpServer.exitCode === null) process.kill(-mcpServer.pid, 'SIGTERM');
    await llm?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs as pasted, twice, and the second paste changes nothing', async () => {
    // Every block but the one that starts the servers (each of its lines goes to a terminal of its own, above).
    const blocks = shellBlocksAfter(readme, '## A first run').filter((b) => !/ npm run dev +#/.test(b));
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    const script = [exportsScript, ...blocks].join('\n');

    for (const attempt of ['first', 'second']) {
      const pasted = await paste(script);
      const context = `${attempt} paste:\n${pasted.stdout}\n${pasted.stderr}`;
      expect({ context, errors: pasted.stderr.split('\n').filter((l) => l.startsWith('error:')) }).toEqual({
        context,
        errors: [],
      });
      expect(pasted.code).toBe(0);
      // The order total, the SSE stream to its end, and the MCP agent's answer through server-everything's echo.
      expect(pasted.stdout).toContain('"total": {\n      "total": 5,\n      "count": 2\n    }');
      expect(pasted.stdout).toContain('event: run.ended');
      expect(pasted.stdout).toContain('"ask": "The echo tool returned: Echo: hello over MCP"');
      // The Inspector, from the local install, lists /mcp's tools on the project's Node.
      expect(pasted.stdout).toMatch(/"name": "order_total"/);
    }

    // docs/mcp.md's Inspector command, as pasted after the export lines.
    const mcpDoc = fs.readFileSync(path.join(repoRoot, 'docs/mcp.md'), 'utf8');
    const inspector = shellBlocksAfter(mcpDoc, '## Stepwise as an MCP server').find((b) => b.includes('mcp-inspector'));
    const inspected = await paste(`${exportsScript}\n${inspector}`);
    expect({ code: inspected.code, stderr: inspected.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(inspected.stdout).toMatch(/"name": "order_total"/);

    // Pasted twice, each thing exists once.
    const key = /STEPWISE_API_KEY=(\S+)/.exec(exportsScript)![1]!;
    const api = `http://127.0.0.1:${ports.API_PORT}/api/v1`;
    const names = async (resource: string) =>
      (
        (await (
          await fetch(`${api}/${resource}?limit=200`, { headers: { Authorization: `Bearer ${key}` } })
        ).json()) as {
          data: { name: string }[];
        }
      ).data.map((d) => d.name);
    expect((await names('agents')).filter((n) => n === 'Order totaler' || n === 'Echoer')).toHaveLength(2);
    expect((await names('workflows')).sort()).toEqual(['Echo', 'Order total']);
    expect(await names('mcp-servers')).toEqual(['everything']);
    // The allowed, answering server drew no warning from the stack.
    expect(run.output()).not.toContain('warning: mcp:');
  });

  it('stops with the API message where a call fails, and without the export lines says to paste them', async () => {
    const helpers = shellBlocksAfter(readme, '## A first run')[0]!;
    // A second template of a taken name: the 409's message, a failed status, an empty id.
    const taken = await paste(
      `${exportsScript}\n${helpers}\nID=$(sw POST /agents .id '{"name": "Order totaler", "default_prompt": "x"}')\n` +
        'echo "status=$? id=[$ID]"',
    );
    expect(taken.stderr).toContain('error: name: you already have an agent template named "Order totaler"');
    expect(taken.stdout).toContain('status=1 id=[]');

    // A bad token: the 401's message.
    const badKey = await paste(
      `${exportsScript}\nexport STEPWISE_API_KEY=sw_wrong\n${helpers}\nsw GET /agents; echo "status=$?"`,
    );
    expect(badKey.stderr).toContain('error: invalid or revoked API key');
    expect(badKey.stdout).toContain('status=1');

    // Nothing exported, or the key missing: the first lines stop and say what to paste.
    const noExports = await paste(`${helpers}\necho after`);
    expect(noExports.stderr).toContain('STEPWISE_URL: paste the export lines npm run dev printed');
    expect(noExports.stdout).not.toContain('after');
    const noKey = await paste(`${exportsScript}\nunset STEPWISE_API_KEY\n${helpers}\necho after`);
    expect(noKey.stderr).toContain('STEPWISE_API_KEY: paste the export lines npm run dev printed');
    expect(noKey.stdout).not.toContain('after');
  });

  it("points the CLI's admin commands at the stack's own database with the export lines", async () => {
    const name = uniqueId('newcomer-');
    const created = await paste(`${exportsScript}\nnpm run -s cli -- users create ${name}`);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const database = await connectDatabase({
      uri: `mongodb://127.0.0.1:${ports.DEV_MONGODB_PORT}`,
      dbName: 'stepwise',
    });
    try {
      expect(await findUserByName(database.db, name)).not.toBeNull();
    } finally {
      await database.close();
    }
  });

  it('warns in the stack when a registered MCP server is not reachable', async () => {
    const helpers = shellBlocksAfter(readme, '## A first run')[0]!;
    const silent = await freePort();
    const registered = await paste(
      `${exportsScript}\n${helpers}\nput mcp-servers <<<'{"name": "nothing-there", "url": "http://127.0.0.1:${silent}/mcp"}'`,
    );
    expect(registered.stderr).toBe('');
    await waitFor('the stack to warn about the server', () => run.output().includes('mcp: server "nothing-there"'), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    // The newcomer's case: a local server the stack's HTTP_ALLOWED_HOSTS does not name, and the setting to use.
    expect(run.output()).toContain(
      `warning: mcp: server "nothing-there" (http://127.0.0.1:${silent}/mcp): it is on a loopback address that ` +
        'HTTP_ALLOWED_HOSTS does not name, so the worker refuses it and agents get no tools from it; restart with ' +
        `HTTP_ALLOWED_HOSTS=${allowed},127.0.0.1:${silent} npm run dev`,
    );
  });

  it('stops cleanly', async () => {
    await stopAndExpectNothingLeft(run);
  });
});
