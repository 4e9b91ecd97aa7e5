/**
 * `workflows list` and `agents list`: what the key's user has to run, through the API. Every page is fetched by
 * following the API's `Link: <…>; rel="next"` cursor, up to `--limit` items.
 */
import type { Command } from 'commander';
import type { ApiFlags, CliContext } from '../context';
import { CliError } from '../errors';
import { printList } from '../table';
import { wholeNumber, withApiFlags } from './api-flags';

type ListFlags = ApiFlags & { limit: string; json?: boolean };

/** Lists are usually short; past this a person narrows them down (agents: --tag, --step-type). */
const LIST_DEFAULT = '1000';

function limitOf(value: string): number {
  return wholeNumber('--limit', value, 100_000);
}

/** Prints the items (JSON lines or a table) and says on stderr when the limit may have cut the list short. */
function print<T>(
  ctx: CliContext,
  flags: ListFlags,
  items: T[],
  what: string,
  header: string[],
  row: (item: T) => string[],
) {
  printList(ctx.io, items, { json: flags.json, empty: `no ${what}`, header, row });
  if (items.length === limitOf(flags.limit)) {
    ctx.io.err(`showing the first ${items.length} ${what}; there may be more (--limit)`);
  }
}

export function registerWorkflowList(workflows: Command, ctx: CliContext): void {
  withApiFlags(workflows.command('list'))
    .description('your workflows, oldest first: id, name, number of steps, last change')
    .option('--limit <n>', 'how many at most', LIST_DEFAULT)
    .option('--json', "one JSON object per line (the API's whole workflow) instead of a table")
    .action(async (flags: ListFlags) => {
      const api = ctx.api(flags);
      const found = await api.list(
        'GET /workflows',
        (page) => api.http.GET('/api/v1/workflows', { params: { query: page } }),
        limitOf(flags.limit),
      );
      print(ctx, flags, found, 'workflows', ['ID', 'NAME', 'STEPS', 'UPDATED'], (w) => [
        w.id,
        w.name,
        String(w.steps.length),
        w.updated_at ?? '-',
      ]);
    });
}

export function registerAgentList(agents: Command, ctx: CliContext): void {
  withApiFlags(agents.command('list'))
    .description('the agent templates you can use, system ones first: id, name, type, model, owner (system or you)')
    .option('--step-type <type>', 'only agent or only action templates')
    .option('--tag <tag>', 'only templates with this tag')
    .option('--limit <n>', 'how many at most', LIST_DEFAULT)
    .option('--json', "one JSON object per line (the API's whole template) instead of a table")
    .action(async (flags: ListFlags & { stepType?: string; tag?: string }) => {
      if (flags.stepType !== undefined && flags.stepType !== 'agent' && flags.stepType !== 'action') {
        throw new CliError(`--step-type: "${flags.stepType}" is not agent or action`);
      }
      const filter: { step_type?: 'agent' | 'action'; tag?: string } = {
        ...(flags.stepType !== undefined ? { step_type: flags.stepType } : {}),
        ...(flags.tag !== undefined ? { tag: flags.tag } : {}),
      };
      const api = ctx.api(flags);
      // System templates and the caller's own, oldest first (system ones first).
      const found = await api.list(
        'GET /agents',
        (page) => api.http.GET('/api/v1/agents', { params: { query: { ...filter, ...page } } }),
        limitOf(flags.limit),
      );
      print(ctx, flags, found, 'templates', ['ID', 'NAME', 'TYPE', 'MODEL', 'OWNER'], (t) => [
        t.id,
        t.name,
        t.step_type === 'action' ? `action:${t.action_type ?? '?'}` : (t.step_type ?? '-'),
        t.model ?? '-',
        t.system ? 'system' : 'you',
      ]);
    });
}
