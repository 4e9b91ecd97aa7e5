/**
 * `mcp-servers apply`: MCP servers as code (decision 0411). A file declares each server by name — its URL, the tools
 * any agent may use, and how it authenticates — naming the environment variable that holds each secret
 * (`auth.token_env`, `auth.headers_env`), never the secret: the file can live in a repository, and CI supplies the
 * values. Servers are matched with the caller's by name, like templates and workflows.
 *
 * The API keeps credentials sealed and never returns them, so a changed secret cannot be seen: `auth` is sent when a
 * server is created, when its auth type changes, when its URL moves to another origin (the API never lets
 * credentials follow a server there), and with `--update-secrets` (after a rotation).
 */
import { z } from 'zod';
import type { ApiClient, McpServerItem } from '../api-client';
import { ApiRequestError } from '../api-client';
import type { CliOutput } from '../context';
import { CliError } from '../errors';
import { definitionName, readDefinitions, type Definition } from './file';

const LIST_MAX = 1000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const envName = z.string().regex(ENV_NAME, 'an environment variable name');
const SECRET_IN_FILE =
  'secrets are never written in a definition file: name the environment variable holding it with ' +
  '`token_env` (bearer) or `headers_env` (headers)';

const authDecl = z.union([
  z.strictObject({ type: z.literal('bearer'), token_env: envName }),
  z.strictObject({ type: z.literal('headers'), headers_env: z.record(z.string().min(1), envName) }),
]);

/** One server as a file declares it (the API checks the values themselves: name, URL, header and tool names). */
const serverDecl = z.strictObject({
  name: z.string(),
  url: z.string(),
  auth: authDecl.optional(),
  allowed_tools: z.array(z.string()).nullable().optional(),
});
type ServerDecl = z.infer<typeof serverDecl>;
type ApiAuth = { type: 'bearer'; token: string } | { type: 'headers'; headers: Record<string, string> };

interface Plan {
  where: string;
  decl: ServerDecl;
  /** The secret values, read from the environment (null: the server has no auth). */
  auth: ApiAuth | null;
  stored: McpServerItem | undefined;
  changed: string[];
}

/** The file's problems with one declaration, each naming the field, or the declaration parsed. */
function parse(def: Definition, name: string): { decl: ServerDecl } | { problems: string[] } {
  const head = `${def.where}: MCP server "${name}"`;
  const auth = def.body.auth as Record<string, unknown> | undefined;
  if (auth && typeof auth === 'object' && ('token' in auth || 'headers' in auth)) {
    return { problems: [`${head}: field "auth.${'token' in auth ? 'token' : 'headers'}": ${SECRET_IN_FILE}`] };
  }
  const parsed = serverDecl.safeParse({ ...def.body, name });
  if (parsed.success) return { decl: parsed.data };
  return {
    problems: parsed.error.issues.map((i) => `${head}: field "${i.path.join('.') || '(definition)'}": ${i.message}`),
  };
}

/** The secrets the declaration names, from the environment; a variable that is unset is a problem. */
function secretsOf(
  decl: ServerDecl,
  env: (name: string) => string | undefined,
  head: string,
): { auth: ApiAuth | null } | { problems: string[] } {
  if (!decl.auth) return { auth: null };
  const missing = (field: string, variable: string) =>
    `${head}: field "${field}": environment variable ${variable} is not set`;
  if (decl.auth.type === 'bearer') {
    const token = env(decl.auth.token_env);
    return token === undefined
      ? { problems: [missing('auth.token_env', decl.auth.token_env)] }
      : { auth: { type: 'bearer', token } };
  }
  const headers: Record<string, string> = {};
  const problems: string[] = [];
  for (const [header, variable] of Object.entries(decl.auth.headers_env)) {
    const value = env(variable);
    if (value === undefined) problems.push(missing(`auth.headers_env.${header}`, variable));
    else headers[header] = value;
  }
  return problems.length > 0 ? { problems } : { auth: { type: 'headers', headers } };
}

/** Credentials are bound to the URL's origin: the API wants them again when it changes (decision 0403). */
function movedOrigin(from: string, to: string): boolean {
  return URL.canParse(from) && URL.canParse(to) && new URL(from).origin !== new URL(to).origin;
}

function changes(stored: McpServerItem, decl: ServerDecl, updateSecrets: boolean): string[] {
  const out: string[] = [];
  if (stored.url !== decl.url) out.push('url');
  const tools = (list: string[] | null | undefined) => JSON.stringify(list ?? null);
  if (tools(stored.allowed_tools) !== tools(decl.allowed_tools)) out.push('allowed_tools');
  const type = decl.auth?.type ?? 'none';
  if (stored.auth.type !== type) out.push('auth');
  else if (type !== 'none' && movedOrigin(stored.url, decl.url)) out.push('auth (new origin)');
  else if (updateSecrets && type !== 'none') out.push('auth (secrets)');
  return out;
}

export interface ApplyMcpServersOptions {
  dryRun: boolean;
  updateSecrets: boolean;
  env: (name: string) => string | undefined;
}

export async function applyMcpServers(
  api: ApiClient,
  io: CliOutput,
  file: string,
  opts: ApplyMcpServersOptions,
): Promise<void> {
  const defs = await readDefinitions(file);
  const stored = await api.list(
    'GET /mcp-servers',
    (q) => api.http.GET('/api/v1/mcp-servers', { params: { query: q } }),
    LIST_MAX,
  );
  const problems: string[] = [];
  const plans: Plan[] = [];
  const seen = new Map<string, string>();
  for (const def of defs) {
    const name = definitionName(def);
    const head = `${def.where}: MCP server "${name}"`;
    const twice = seen.get(name);
    if (twice) throw new CliError(`${head} is also defined in ${twice}`);
    seen.set(name, def.where);
    const parsed = parse(def, name);
    if ('problems' in parsed) {
      problems.push(...parsed.problems);
      continue;
    }
    const secrets = secretsOf(parsed.decl, opts.env, head);
    if ('problems' in secrets) {
      problems.push(...secrets.problems);
      continue;
    }
    const match = stored.find((s) => s.name === name);
    const changed = match ? changes(match, parsed.decl, opts.updateSecrets) : ['(new)'];
    plans.push({ where: def.where, decl: parsed.decl, auth: secrets.auth, stored: match, changed });
  }
  if (problems.length > 0) {
    for (const line of problems) io.err(line);
    throw new CliError(`${file}: ${problems.length} problem(s); nothing was written`);
  }
  for (const p of plans) {
    const label = `MCP server "${p.decl.name}"`;
    if (p.changed.length === 0) {
      io.out(`unchanged ${label} ${p.stored!.id}`);
      continue;
    }
    if (opts.dryRun) {
      io.out(p.stored ? `would update ${label} ${p.stored.id}: ${p.changed.join(', ')}` : `would create ${label}`);
      continue;
    }
    try {
      const written = await write(api, p);
      io.out(p.stored ? `updated ${label} ${written.id}: ${p.changed.join(', ')}` : `created ${label} ${written.id}`);
    } catch (err) {
      // The API's own checks (URL, header names, tool names): the servers before this one are written.
      if (err instanceof ApiRequestError && (err.status === 400 || err.status === 409) && err.serverMessage) {
        throw new CliError(`${p.where}: ${label}: ${err.serverMessage} (the servers listed above were written)`);
      }
      throw err;
    }
  }
}

async function write(api: ApiClient, p: Plan): Promise<McpServerItem> {
  const { name, url } = p.decl;
  const allowed_tools = p.decl.allowed_tools ?? null;
  if (!p.stored) {
    const body = { name, url, allowed_tools, ...(p.auth ? { auth: p.auth } : {}) };
    return (await api.unwrap('POST /mcp-servers', api.http.POST('/api/v1/mcp-servers', { body }))).data;
  }
  // Credentials only when they change kind or are asked for: an unchanged file never touches them.
  const sendAuth = p.changed.some((c) => c.startsWith('auth'));
  const body = { url, allowed_tools, ...(sendAuth ? { auth: p.auth } : {}) };
  const answer = api.http.PATCH('/api/v1/mcp-servers/{id}', { params: { path: { id: p.stored.id } }, body });
  return (await api.unwrap('PATCH /mcp-servers/…', answer)).data;
}
