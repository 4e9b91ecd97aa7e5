/**
 * A workflow's MCP tool name: its name sanitised to the protocol's tool-name pattern (`[A-Za-z0-9._-]{1,128}`),
 * lower-cased, and unique among the caller's listed workflows and the fixed tools. On a collision the oldest workflow
 * keeps the plain name and every later one gets `_<last 6 characters of its id>`, so creating a workflow never renames
 * a tool a client already uses (docs/decisions/0452-mcp-tool-names.md).
 */

/** The protocol's tool-name pattern (SEP-986). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Room left for the suffix: base + `_` + 6 characters stays under the 128-character limit. */
const MAX_BASE_LENGTH = 100;
const SUFFIX_LENGTH = 6;

/** The sanitised base of a workflow name (never empty). */
export function toolBaseName(workflowName: string): string {
  const base = workflowName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '_')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, MAX_BASE_LENGTH)
    .replace(/[._-]+$/, '');
  return base || 'workflow';
}

export interface NamedWorkflow {
  id: string;
  name: string;
  created_at: Date;
}

/**
 * Tool name by workflow id for `workflows` (all of the caller's listed workflows), none equal to a name in `reserved`.
 */
export function assignToolNames(
  workflows: readonly NamedWorkflow[],
  reserved: ReadonlySet<string>,
): Map<string, string> {
  const oldestFirst = [...workflows].sort(
    (a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const taken = new Set(reserved);
  const names = new Map<string, string>();
  for (const wf of oldestFirst) {
    const base = toolBaseName(wf.name);
    let name = taken.has(base) ? `${base}_${wf.id.slice(-SUFFIX_LENGTH)}` : base;
    // Two suffixed names can still meet (same base, same id tail): the whole id then decides.
    if (taken.has(name)) name = `${base.slice(0, MAX_BASE_LENGTH - 27)}_${wf.id}`.slice(0, 128);
    taken.add(name);
    names.set(wf.id, name);
  }
  return names;
}
