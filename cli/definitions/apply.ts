/**
 * `workflows apply` / `agents apply`: create or update definitions by name. Every definition of the file is first
 * checked by the server (`?dry_run=true`: the same rules as a write, nothing stored); only when all pass are they
 * written, so a file with one bad definition changes nothing. `--dry-run` stops after the check.
 */
import type { ApiClient } from '../api-client';
import { ApiRequestError } from '../api-client';
import type { CliOutput } from '../context';
import { CliError } from '../errors';
import { resolvedTemplateChanges, templateChanges, workflowChanges } from './diff';
import { definitionName, readDefinitions, type Definition } from './file';
import { resolveMcpServerNames } from './mcp-refs';
import { describeProblems } from './problems';

/** How a kind of definition is listed, checked and written through the API. */
interface Kind {
  /** `workflow` / `template`, in messages. */
  noun: 'workflow' | 'template';
  /** What the caller owns and may update, by name. */
  stored(api: ApiClient): Promise<{ id: string; name: string; body: Record<string, unknown> }[]>;
  changes(stored: Record<string, unknown>, file: Record<string, unknown>): string[];
  /**
   * Fields the server would set differently from what is stored although the file did not change them (a template
   * name that now resolves to another template).
   */
  resolved(stored: Record<string, unknown>, wouldBe: Record<string, unknown>): string[];
  /** POST (no id) or PATCH; resolves to what was written (or would be). */
  write(
    api: ApiClient,
    id: string | null,
    body: Record<string, unknown>,
    dryRun: boolean,
  ): Promise<Record<string, unknown> & { id?: string }>;
}

const LIST_MAX = 10_000;
const dry = (dryRun: boolean) => ({ query: { dry_run: dryRun ? ('true' as const) : ('false' as const) } });

const workflowKind: Kind = {
  noun: 'workflow',
  async stored(api) {
    const all = await api.list(
      'GET /workflows',
      (q) => api.http.GET('/api/v1/workflows', { params: { query: q } }),
      LIST_MAX,
    );
    return all.map((w) => ({ id: w.id, name: w.name, body: w }));
  },
  changes: workflowChanges,
  resolved: resolvedTemplateChanges,
  async write(api, id, file, dryRun) {
    // The file is the whole definition: what it leaves out is cleared (description) or emptied (config).
    const body = { ...file, description: file.description ?? null, config: file.config ?? {} } as never;
    const answer =
      id === null
        ? api.http.POST('/api/v1/workflows', { params: dry(dryRun), body })
        : api.http.PATCH('/api/v1/workflows/{id}', { params: { path: { id }, ...dry(dryRun) }, body });
    // A created definition's dry run has no id (nothing was stored).
    return (await api.unwrap(id === null ? 'POST /workflows' : 'PATCH /workflows/…', answer)).data;
  },
};

const templateKind: Kind = {
  noun: 'template',
  async stored(api) {
    const all = await api.list(
      'GET /agents',
      (q) => api.http.GET('/api/v1/agents', { params: { query: q } }),
      LIST_MAX,
    );
    // System templates are read-only: a file's template of the same name is the caller's own.
    return all.filter((t) => !t.system).map((t) => ({ id: t.id, name: t.name, body: t }));
  },
  changes: templateChanges,
  resolved: () => [],
  async write(api, id, file, dryRun) {
    const body = file as never;
    const answer =
      id === null
        ? api.http.POST('/api/v1/agents', { params: dry(dryRun), body })
        : api.http.PATCH('/api/v1/agents/{id}', { params: { path: { id }, ...dry(dryRun) }, body });
    return (await api.unwrap(id === null ? 'POST /agents' : 'PATCH /agents/…', answer)).data;
  },
};

interface Plan {
  def: Definition;
  name: string;
  id: string | null;
  /** The stored definition of that name, if any. */
  stored: Record<string, unknown> | null;
  changed: string[];
}

async function plan(api: ApiClient, kind: Kind, defs: Definition[]): Promise<Plan[]> {
  const stored = await kind.stored(api);
  const seen = new Map<string, string>();
  return defs.map((written) => {
    const name = definitionName(written);
    // Compared and sent as the server stores it: a name with spaces around it is the template of the bare name.
    const def = { ...written, body: { ...written.body, name } };
    const twice = seen.get(name);
    if (twice) throw new CliError(`${def.where}: ${kind.noun} "${name}" is also defined in ${twice}`);
    seen.set(name, def.where);
    const matches = stored.filter((s) => s.name === name);
    if (matches.length > 1) {
      throw new CliError(
        `${def.where}: ${kind.noun} "${name}": ${matches.length} of yours have this name ` +
          `(${matches.map((m) => m.id).join(', ')}); rename or delete all but one`,
      );
    }
    const [match] = matches;
    const changed = match ? kind.changes(match.body, def.body) : ['(new)'];
    return { def, name, id: match?.id ?? null, stored: match?.body ?? null, changed };
  });
}

/** The server's verdict on one definition: what it would store, or the file-named problem lines. */
async function check(
  api: ApiClient,
  kind: Kind,
  p: Plan,
): Promise<{ wouldBe: Record<string, unknown> } | { problems: string[] }> {
  try {
    return { wouldBe: await kind.write(api, p.id, p.def.body, true) };
  } catch (err) {
    // 409: a template of that name appeared since the list was read (names are unique per owner).
    if (err instanceof ApiRequestError && (err.status === 400 || err.status === 409) && err.serverMessage) {
      return { problems: describeProblems(p.def, kind.noun, err.serverMessage) };
    }
    throw err;
  }
}

async function apply(api: ApiClient, io: CliOutput, kind: Kind, file: string, dryRun: boolean): Promise<void> {
  // MCP servers named in the file (`server: tickets`) become the caller's ids first (./mcp-refs.ts).
  const resolved = await resolveMcpServerNames(api, kind.noun, await readDefinitions(file));
  const problems: string[] = [...resolved.problems];
  const plans = problems.length > 0 ? [] : await plan(api, kind, resolved.defs);
  // Every definition, changed or not: an unchanged file may name a template that is gone or was re-created.
  for (const p of plans) {
    const verdict = await check(api, kind, p);
    if ('problems' in verdict) problems.push(...verdict.problems);
    else if (p.stored && p.changed.length === 0) p.changed = kind.resolved(p.stored, verdict.wouldBe);
  }
  if (problems.length > 0) {
    for (const line of problems) io.err(line);
    throw new CliError(`${file}: ${problems.length} problem(s); nothing was written`);
  }
  for (const p of plans) {
    const label = `${kind.noun} "${p.name}"`;
    if (p.changed.length === 0) {
      io.out(`unchanged ${label} ${p.id}`);
      continue;
    }
    if (dryRun) {
      io.out(p.id === null ? `would create ${label}` : `would update ${label} ${p.id}: ${p.changed.join(', ')}`);
      continue;
    }
    const { id = '' } = await kind.write(api, p.id, p.def.body, false);
    io.out(p.id === null ? `created ${label} ${id}` : `updated ${label} ${id}: ${p.changed.join(', ')}`);
  }
}

export const applyWorkflows = (api: ApiClient, io: CliOutput, file: string, dryRun: boolean) =>
  apply(api, io, workflowKind, file, dryRun);
export const applyTemplates = (api: ApiClient, io: CliOutput, file: string, dryRun: boolean) =>
  apply(api, io, templateKind, file, dryRun);
