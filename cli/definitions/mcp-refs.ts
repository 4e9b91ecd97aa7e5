/**
 * MCP servers by name in template and workflow files: an `mcp_tools` entry names its server with `server: tickets`
 * (what `mcp-servers apply` declared) instead of a deployment's `server_id`, so one file applies to every deployment.
 * `apply` resolves the names to the caller's server ids before the server checks the definition; `export` writes the
 * names back.
 */
import type { ApiClient } from '../api-client';
import type { Definition } from './file';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `mcp_tools` lists of a definition, each with the prefix its problems carry (`step "ask": `). */
function selections(body: Json, kind: 'template' | 'workflow'): { at: string; list: unknown[] }[] {
  if (kind === 'template') return Array.isArray(body.mcp_tools) ? [{ at: '', list: body.mcp_tools }] : [];
  const steps = Array.isArray(body.steps) ? body.steps : [];
  return steps.flatMap((step, i) =>
    isObject(step) && Array.isArray(step.mcp_tools)
      ? [{ at: `step "${typeof step.id === 'string' ? step.id : `#${i + 1}`}": `, list: step.mcp_tools }]
      : [],
  );
}

async function serverIds(api: ApiClient): Promise<Map<string, string>> {
  const all = await api.list(
    'GET /mcp-servers',
    (q) => api.http.GET('/api/v1/mcp-servers', { params: { query: q } }),
    1000,
  );
  return new Map(all.map((s) => [s.name, s.id]));
}

/**
 * The definitions with every `server` name replaced by the caller's server id, and the problems: unknown names, each
 * naming file, definition, step and field (any problem stops the apply before anything is written).
 */
export async function resolveMcpServerNames(
  api: ApiClient,
  kind: 'template' | 'workflow',
  defs: Definition[],
): Promise<{ defs: Definition[]; problems: string[] }> {
  const named = defs.some((d) =>
    selections(d.body, kind).some(({ list }) => list.some((e) => isObject(e) && e.server !== undefined)),
  );
  if (!named) return { defs, problems: [] };
  const ids = await serverIds(api);
  const problems: string[] = [];
  const out = defs.map((def) => {
    const body = structuredClone(def.body);
    for (const { at, list } of selections(body, kind)) {
      list.forEach((entry, i) => {
        if (!isObject(entry) || entry.server === undefined) return;
        const head = `${def.where}: ${kind} "${String(body.name)}": ${at}field "mcp_tools[${i}].server"`;
        const id = typeof entry.server === 'string' ? ids.get(entry.server) : undefined;
        if (entry.server_id !== undefined) problems.push(`${head}: give server or server_id, not both`);
        else if (id === undefined) {
          problems.push(
            `${head}: you have no MCP server named ${JSON.stringify(entry.server)} (declare it and run ` +
              '`mcp-servers apply` first)',
          );
        } else {
          const { server: _name, ...rest } = entry;
          list[i] = { server_id: id, ...rest };
        }
      });
    }
    return { where: def.where, body };
  });
  return { defs: out, problems };
}

/** A stored definition with its servers by name (ids of servers the caller no longer has stay ids). */
export async function nameMcpServers(api: ApiClient, kind: 'template' | 'workflow', body: Json): Promise<Json> {
  if (!selections(body, kind).some(({ list }) => list.length > 0)) return body;
  const names = new Map([...(await serverIds(api))].map(([name, id]) => [id, name]));
  const out = structuredClone(body);
  for (const { list } of selections(out, kind)) {
    list.forEach((entry, i) => {
      if (!isObject(entry) || typeof entry.server_id !== 'string') return;
      const name = names.get(entry.server_id);
      if (name === undefined) return;
      const { server_id: _id, ...rest } = entry;
      list[i] = { server: name, ...rest };
    });
  }
  return out;
}
