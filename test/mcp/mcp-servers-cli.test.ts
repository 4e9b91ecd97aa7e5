/**
 * `mcp-servers create|list|delete`: the CLI (in-process, as the entrypoint runs it) against the real API on a socket.
 * The token given to `create` never appears in any output.
 */
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startTestApi, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

describe('CLI mcp-servers against the real API', () => {
  let api: TestApi;
  let user: TestUser;
  let url: string;

  beforeAll(async () => {
    api = await startTestApi();
    user = await createTestUser(api.database.db);
    url = await api.listen();
  });
  afterAll(() => api?.close());

  const cli = async (...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };

  it('creates with a token, lists without it, deletes; a refusal is the API message', async () => {
    const name = uniqueId('cli');
    const token = 'cli-token-7d1e93';
    const created = await cli('mcp-servers', 'create', name, 'https://mcp.example.com/mcp', '--bearer-token', token);
    expect(created.code).toBe(0);
    const [id, shownName, shownUrl] = created.out[0]!.split('\t');
    expect(id).toMatch(/^mcp_/);
    expect([shownName, shownUrl]).toEqual([name, 'https://mcp.example.com/mcp']);

    const table = await cli('mcp-servers', 'list');
    expect(table.out.join('\n')).toContain(name);
    expect(table.out.join('\n')).toContain('bearer');
    const json = await cli('mcp-servers', 'list', '--json');
    expect(json.out.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([id]);
    for (const r of [created, table, json]) expect([...r.out, ...r.err].join('\n')).not.toContain(token);

    const dup = await cli('mcp-servers', 'create', name, 'https://mcp.example.com/mcp');
    expect(dup.code).not.toBe(0);
    expect(dup.err.join('\n')).toContain(`already have an MCP server named "${name}"`);

    expect((await cli('mcp-servers', 'delete', id!)).out).toEqual([`deleted ${id}`]);
    expect((await cli('mcp-servers', 'list', '--json')).out).toEqual([]);
  });
});
