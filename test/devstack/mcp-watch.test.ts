/**
 * `npm run dev`'s warnings about MCP servers agents would get no tools from (devstack/mcp-watch.ts), on the real
 * database and the real server-everything: a loopback server HTTP_ALLOWED_HOSTS does not name, a port nothing listens
 * on (and the note once it answers), and silence for a server that is allowed and answers.
 */
import net from 'node:net';
import { freePort } from '../../devstack/process';
import { mcpServerProblem, watchMcpServers } from '../../devstack/mcp-watch';
import { insertMcpServer, newMcpServerId } from '../../db/mcp-servers';
import { startEverything, type EverythingServer } from '../mcp/mcp-test-servers';
import { uniqueId, useTestDb } from '../helpers/stack';

describe('dev stack MCP server warnings', () => {
  const database = useTestDb();
  let everything: EverythingServer;
  beforeAll(async () => {
    everything = await startEverything();
  });
  afterAll(() => everything?.close());

  async function register(url: string, name = uniqueId('s')): Promise<string> {
    const now = new Date();
    const _id = newMcpServerId();
    await insertMcpServer(database.db, {
      _id,
      owner_id: uniqueId('usr_'),
      name,
      url,
      auth_type: 'none',
      credentials: null,
      allowed_tools: null,
      created_at: now,
      updated_at: now,
    });
    return _id;
  }

  it('names HTTP_ALLOWED_HOSTS for a loopback server it does not name, and is quiet once it does', async () => {
    const problem = await mcpServerProblem(everything.url, []);
    expect(problem).toBe(
      `it is on a loopback address that HTTP_ALLOWED_HOSTS does not name, so the worker refuses it and agents get no ` +
        `tools from it; restart with HTTP_ALLOWED_HOSTS=${everything.host} npm run dev`,
    );
    expect(await mcpServerProblem(everything.url, ['example.com'])).toContain(
      `HTTP_ALLOWED_HOSTS=example.com,${everything.host} npm run dev`,
    );
    expect(await mcpServerProblem(everything.url, [everything.host])).toBeNull();
    expect(await mcpServerProblem(everything.url, ['127.0.0.1'])).toBeNull();
  });

  it('warns once per server and problem as servers are registered, and notes when one starts answering', async () => {
    const silentPort = await freePort();
    const lines: string[] = [];
    const watch = watchMcpServers(database.db, ['127.0.0.1'], (l) => lines.push(l), 3_600_000);
    try {
      await register(everything.url, 'everything');
      await register(`http://127.0.0.1:${silentPort}/mcp`, 'later');
      await watch.pass();
      await watch.pass();
      expect(lines).toEqual([
        `warning: mcp: server "later" (http://127.0.0.1:${silentPort}/mcp): nothing answers at 127.0.0.1:${silentPort} ` +
          '(ECONNREFUSED), so agents get no tools from it until it does',
      ]);

      // Something starts listening there: the next pass says so, and later passes say nothing more.
      const listener = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => listener.listen(silentPort, '127.0.0.1', resolve));
      try {
        await watch.pass();
        await watch.pass();
      } finally {
        await new Promise((resolve) => listener.close(resolve));
      }
      expect(lines.slice(1)).toEqual([`mcp: server "later" (http://127.0.0.1:${silentPort}/mcp) now answers`]);
    } finally {
      watch.stop();
    }
  });
});
