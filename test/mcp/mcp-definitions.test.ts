/**
 * MCP servers in definitions as code, with the real stack: `mcp-servers apply` declares a server whose token comes
 * from the environment variable the file names (never from the file), a template file gives an agent its tools by
 * the server's name, a workflow file uses that template, and the run's agent calls the real MCP server with the
 * token. Re-applying changes nothing; a secret written in the file, an unset variable or an unknown server name is
 * a problem naming file and field, and nothing is written.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

const TOKEN = 'defs-token-5b0c2e9a71';
type Msg = { role: string; content: string };

describe('MCP servers in definitions as code', () => {
  let llm: LlmServer;
  let server: FailureServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
    api = await startTestApi(
      testConfig({ OPENAI_API_KEY: 'sk-test-mcp-defs', OPENAI_BASE_URL: llm.baseUrl, HTTP_ALLOWED_HOSTS: server.host }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    url = await api.listen();
    dir = await mkdtemp(path.join(tmpdir(), 'stepwise-mcp-defs-'));
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await Promise.all([llm?.close(), server?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cli = async (env: Record<string, string>, ...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
    return { code, out, err, all: [...out, ...err].join('\n') };
  };
  const file = async (name: string, text: string) => {
    const at = path.join(dir, name);
    await writeFile(at, text);
    return at;
  };
  const servers = async () =>
    (await api.http.get('/api/v1/mcp-servers').set(user.auth)).body.data as { id: string; name: string }[];

  it('declares a server with its token from the environment; templates and workflows name it', async () => {
    const ops = uniqueId('ops');
    const serversFile = await file(
      'mcp-servers.yaml',
      `name: ${ops}\nurl: ${server.url}\nauth:\n  type: bearer\n  token_env: OPS_TOKEN\nallowed_tools: [lookup]\n`,
    );

    // The variable the file names is unset: nothing is written.
    const unset = await cli({}, 'mcp-servers', 'apply', '-f', serversFile);
    expect(unset.code).toBe(1);
    expect(unset.err).toContain(
      `${serversFile}: MCP server "${ops}": field "auth.token_env": environment variable OPS_TOKEN is not set`,
    );
    // A secret written in the file is refused.
    const literal = await file('literal.yaml', `name: ${ops}\nurl: ${server.url}\nauth: { type: bearer, token: x }\n`);
    const refused = await cli({}, 'mcp-servers', 'apply', '-f', literal);
    expect(refused.code).toBe(1);
    expect(refused.all).toContain('field "auth.token": secrets are never written in a definition file');
    expect((await servers()).map((s) => s.name)).not.toContain(ops);

    const created = await cli({ OPS_TOKEN: TOKEN }, 'mcp-servers', 'apply', '-f', serversFile);
    expect(created.code).toBe(0);
    expect(created.out[0]).toMatch(new RegExp(`^created MCP server "${ops}" mcp_`));
    const again = await cli({ OPS_TOKEN: TOKEN }, 'mcp-servers', 'apply', '-f', serversFile);
    expect(again.out[0]).toMatch(new RegExp(`^unchanged MCP server "${ops}" mcp_`));
    const rotated = await cli({ OPS_TOKEN: TOKEN }, 'mcp-servers', 'apply', '-f', serversFile, '--update-secrets');
    expect(rotated.out[0]).toMatch(/: auth \(secrets\)$/);
    for (const r of [created, again, rotated]) expect(r.all).not.toContain(TOKEN);

    // A template that names an unknown server: a problem naming the field; nothing written.
    const agent = uniqueId('Lookup agent ');
    const script = llm.script(uniqueId('gpt-defs-'), [
      { toolCalls: [{ name: `${ops}__lookup`, args: { key: 'k9' } }] },
      { text: 'found it' },
    ]);
    const template = (serverName: string) =>
      [
        `name: ${agent}`,
        'default_prompt: Look keys up.',
        'default_tools: []',
        `model: openai:${script.model}`,
        'mcp_tools:',
        `  - server: ${serverName}`,
        '    include: [lookup]',
        '',
      ].join('\n');
    const unknown = await cli({}, 'agents', 'apply', '-f', await file('bad-agent.yaml', template('nope')));
    expect(unknown.code).toBe(1);
    expect(unknown.err.join('\n')).toContain(
      `template "${agent}": field "mcp_tools[0].server": you have no MCP server named "nope"`,
    );

    const agentFile = await file('agent.yaml', template(ops));
    const applied = await cli({}, 'agents', 'apply', '-f', agentFile);
    expect(applied.code).toBe(0);
    expect(applied.out[0]).toMatch(/^created template/);
    expect((await cli({}, 'agents', 'apply', '-f', agentFile)).out[0]).toMatch(/^unchanged template/);
    const templateId = applied.out[0]!.split(' ').at(-1)!;
    // Export gives the server back by name: the file applies to another deployment.
    const exported = parse((await cli({}, 'agents', 'export', templateId)).out.join('\n')) as {
      mcp_tools: unknown[];
    };
    expect(exported.mcp_tools).toEqual([{ server: ops, include: ['lookup'] }]);

    const workflowName = uniqueId('Lookup flow ');
    const workflowFile = await file(
      'workflow.yaml',
      [
        `name: ${workflowName}`,
        'steps:',
        '  - id: ask',
        `    template: ${agent}`,
        "    input: '{{input.question}}'",
        '    mcp_tools:',
        `      - server: ${ops}`,
        '',
      ].join('\n'),
    );
    const wf = await cli({}, 'workflows', 'apply', '-f', workflowFile);
    expect(wf.code).toBe(0);
    expect((await cli({}, 'workflows', 'apply', '-f', workflowFile)).out[0]).toMatch(/^unchanged workflow/);
    const workflowId = wf.out[0]!.split(' ').at(-1)!;

    const before = server.callsOf('lookup').length;
    const runId = await startRun(api, user, workflowId, { question: 'look k9 up' });
    const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    const calls = server.callsOf('lookup').slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const results = (script.requests[1]!.body.messages as Msg[]).filter((m) => m.role === 'tool');
    expect(results[0]!.content).toContain('value of k9');
  }, 120_000);
});
