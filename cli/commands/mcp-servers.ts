/**
 * `mcp-servers list|create|delete|apply`: the MCP servers agents may take tools from, through the API with the key.
 * The token or headers given to `create` go to the API once; no command can show them again. `apply` declares them
 * as code (../definitions/mcp-servers.ts), secrets named by environment variable.
 */
import type { Command } from 'commander';
import type { McpServerItem } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { applyMcpServers } from '../definitions/mcp-servers';
import { CliError } from '../errors';
import { printList } from '../table';
import { withApiFlags } from './api-flags';

const MCP_SERVERS_MAX = 1000;

interface CreateFlags extends ApiFlags {
  bearerToken?: string;
  header?: string[];
  allow?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `Name: value` pairs of `--header` into the API's `auth`; a bearer token wins alone. */
function authOf(flags: CreateFlags) {
  if (flags.bearerToken !== undefined && flags.header?.length) {
    throw new CliError('give either --bearer-token or --header, not both');
  }
  if (flags.bearerToken !== undefined) return { type: 'bearer' as const, token: flags.bearerToken };
  if (!flags.header?.length) return undefined;
  const headers: Record<string, string> = {};
  for (const line of flags.header) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new CliError(`--header ${JSON.stringify(line)}: expected "Name: value"`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { type: 'headers' as const, headers };
}

export function registerMcpServerCommands(program: Command, ctx: CliContext): void {
  const servers = program
    .command('mcp-servers')
    .description('MCP servers whose tools agents may use, through the API (--api-key or STEPWISE_API_KEY)');

  const show = (s: McpServerItem) => `${s.id}\t${s.name}\t${s.url}`;

  withApiFlags(servers.command('list'))
    .description('your MCP servers')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const list = await api.list(
        'GET /mcp-servers',
        (page) => api.http.GET('/api/v1/mcp-servers', { params: { query: page } }),
        MCP_SERVERS_MAX,
      );
      printList(ctx.io, list, {
        json: flags.json,
        empty: 'no MCP servers; register one with: npm run cli -- mcp-servers create <name> <url>',
        header: ['SERVER', 'NAME', 'AUTH', 'TOOLS', 'URL'],
        row: (s) => [s.id, s.name, s.auth.type, s.allowed_tools?.join(',') ?? '(all)', s.url],
      });
    });

  withApiFlags(servers.command('create'))
    .description('register a Streamable HTTP MCP server; prints its id, name and URL')
    .argument('<name>', 'unique among yours; models see its tools as <name>__<tool>')
    .argument('<url>', 'the endpoint, e.g. https://mcp.example.com/mcp')
    .option('--bearer-token <token>', 'sent as Authorization: Bearer <token> (stored encrypted, never shown again)')
    .option('--header <name: value>', 'a header sent with every request (repeatable; stored encrypted)', collect)
    .option('--allow <tool>', 'only this tool of the server may be used (repeatable; default: all)', collect)
    .action(async (name: string, url: string, flags: CreateFlags) => {
      const api = ctx.api(flags);
      const auth = authOf(flags);
      const body = { name, url, ...(auth ? { auth } : {}), ...(flags.allow ? { allowed_tools: flags.allow } : {}) };
      const answer = api.http.POST('/api/v1/mcp-servers', { body });
      ctx.io.out(show((await api.unwrap('POST /mcp-servers', answer)).data));
    });

  withApiFlags(servers.command('apply'))
    .description(
      'create or update MCP servers by name from a YAML or JSON file; secrets come from the environment variables ' +
        'the file names (auth.token_env, auth.headers_env), never from the file',
    )
    .requiredOption('-f, --file <file>', 'the definition file')
    .option('--dry-run', 'print what would change; write nothing')
    .option('--update-secrets', 'send the credentials of every server that has auth (after a rotation)')
    .action(async (flags: ApiFlags & { file: string; dryRun?: boolean; updateSecrets?: boolean }) => {
      await applyMcpServers(ctx.api(flags), ctx.io, flags.file, {
        dryRun: flags.dryRun ?? false,
        updateSecrets: flags.updateSecrets ?? false,
        env: (name) => ctx.env(name),
      });
    });

  withApiFlags(servers.command('delete'))
    .description('delete an MCP server')
    .argument('<server-id>', 'the server (mcp_…)')
    .action(async (id: string, flags: ApiFlags) => {
      const api = ctx.api(flags);
      const answer = api.http.DELETE('/api/v1/mcp-servers/{id}', { params: { path: { id } } });
      await api.unwrap('DELETE /mcp-servers/…', answer);
      ctx.io.out(`deleted ${id}`);
    });
}
