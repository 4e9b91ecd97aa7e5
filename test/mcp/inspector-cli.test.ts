/**
 * `/mcp` as a third-party client sees it: the MCP Inspector's CLI mode, run as a child process against the real API
 * (and a worker, so the run it starts completes), lists the caller's workflow tools and calls one; without the key it
 * fails.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { repoRoot } from '../helpers/run-node';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, waitForStatus } from '../helpers/workflows';

const INSPECTOR = path.join(repoRoot, 'node_modules/@modelcontextprotocol/inspector-cli/build/cli.js');

/**
 * The Inspector CLI (1.0.3) checks for `../package.json` relative to the working directory but imports it relative to
 * its own module: started from a directory one level below a package.json, both agree on its own package.json.
 */
const INSPECTOR_CWD = path.join(repoRoot, 'test');

function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [INSPECTOR, '--cli', ...args],
      { cwd: INSPECTOR_CWD, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(new Error(`the Inspector did not run: ${err.message}`));
        resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
  });
}

describe('/mcp through the MCP Inspector CLI', () => {
  let g: GraphStack;
  let url: string;

  beforeAll(async () => {
    g = await startGraphStack();
    url = `${await g.api.listen()}/mcp`;
  }, 60_000);
  afterAll(() => g?.stop());

  it('lists the workflow tools and starts a run with the caller key; fails without it', async () => {
    const name = uniqueId('inspected-');
    const wf = await createWorkflow(g.api, g.user, {
      name,
      description: 'Echoes the topic.',
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: 'topic', data: '{{input}}' } }],
    });
    const auth = `Authorization: Bearer ${g.user.key}`;

    const listed = await inspector([url, '--transport', 'http', '--header', auth, '--method', 'tools/list']);
    if (listed.code !== 0) throw new Error(`the Inspector failed: ${listed.stderr}`);
    const tools = (JSON.parse(listed.stdout) as { tools: Tool[] }).tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['start_run', 'get_run', name]));
    expect(tools.find((t) => t.name === name)?.description).toMatch(/^Echoes the topic\./);

    const called = await inspector([
      url,
      '--transport',
      'http',
      '--header',
      auth,
      '--method',
      'tools/call',
      '--tool-name',
      name,
      '--tool-arg',
      'topic=surf',
    ]);
    if (called.code !== 0) throw new Error(`the Inspector failed: ${called.stderr}`);
    const result = JSON.parse(called.stdout) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const runId = (result.structuredContent as { run_id: string; workflow_id: string }).run_id;
    const done = await waitForStatus(g.api, g.user, runId, (s) => s.status === 'completed');
    expect(done).toMatchObject({ workflow_id: wf, outputs: { echo: 'surf' } });

    const refused = await inspector([url, '--transport', 'http', '--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toMatch(/401|Unauthorized|API key/i);
  });
});
