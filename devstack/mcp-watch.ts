/**
 * `npm run dev` warns when a registered MCP server cannot give agents tools. The API accepts any http(s) URL with 201
 * (private addresses are refused when the worker uses the server, not at registration), and a server the worker
 * cannot list only leaves a problem in the step's transcript: a newcomer's local server on 127.0.0.1 silently offered
 * no tools. So the dev stack checks each server registered or changed while it runs, as the worker would reach it:
 * a private address that HTTP_ALLOWED_HOSTS does not name, a host that does not resolve, nothing listening.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import type { Db } from 'mongodb';
import { mcpServersCollection } from '../db/mcp-servers';
import { isAllowedHost, normalHost, refusedRange } from '../domain/address-policy';

/** How long a connection attempt may take before the server counts as not answering. */
const CONNECT_TIMEOUT_MS = 3_000;

/**
 * Why the worker could not list `url`'s tools, as a sentence that says what to do, or null when its address is allowed
 * and something accepts connections there. Only connects (no MCP request): the check must not act on the server.
 */
export async function mcpServerProblem(url: string, allowedHosts: readonly string[]): Promise<string | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'its URL does not parse';
  }
  const host = normalHost(target.hostname);
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return `its host ${host} does not resolve, so agents get no tools from it`;
  }
  if (!isAllowedHost(target, allowedHosts)) {
    const range = addresses.map(refusedRange).find((r) => r !== null);
    if (range) {
      const allow = [...allowedHosts, target.host].join(',');
      return (
        `it is on a ${range} address that HTTP_ALLOWED_HOSTS does not name, so the worker refuses it and agents get ` +
        `no tools from it; restart with HTTP_ALLOWED_HOSTS=${allow} npm run dev`
      );
    }
  }
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const refused = await connectProblem(addresses[0]!, port);
  return refused && `nothing answers at ${target.host} (${refused}), so agents get no tools from it until it does`;
}

function connectProblem(address: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('no answer');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

export interface McpWatch {
  /** Checks the servers registered or changed since the last pass, and re-checks those with a problem. */
  pass(): Promise<void>;
  stop(): void;
}

/**
 * Every `intervalMs`, a pass over every user's MCP servers (a dev stack's database): a server gets a warning when it
 * first shows a problem or its problem changes, and a note when a server that had one answers. The timer does not
 * keep the process alive.
 */
export function watchMcpServers(
  db: Db,
  allowedHosts: readonly string[],
  log: (message: string) => void,
  intervalMs = 5_000,
): McpWatch {
  /** Server id → the URL checked and the problem found there (null: none). */
  const checked = new Map<string, { url: string; problem: string | null }>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const pass = async () => {
    const servers = await mcpServersCollection(db)
      .find({}, { projection: { _id: 1, name: 1, url: 1 } })
      .toArray();
    for (const server of servers) {
      const before = checked.get(server._id);
      if (before && before.url === server.url && before.problem === null) continue;
      const problem = await mcpServerProblem(server.url, allowedHosts);
      checked.set(server._id, { url: server.url, problem });
      const label = `mcp: server "${server.name}" (${server.url})`;
      if (problem !== null && problem !== before?.problem) log(`warning: ${label}: ${problem}`);
      else if (problem === null && before?.problem && before.url === server.url) log(`${label} now answers`);
    }
  };
  const loop = () => {
    timer = setTimeout(() => {
      pass()
        .catch((err: unknown) => log(`mcp: checking MCP servers failed: ${(err as Error).message}`))
        .finally(() => {
          if (!stopped) loop();
        });
    }, intervalMs);
    timer.unref();
  };
  loop();
  return {
    pass,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
