/** `usage`: the caller's counted model usage, grouped and priced as GET /api/v1/usage answers it, as a table. */
import type { Command } from 'commander';
import type { Schemas } from '../../client';
import type { ApiFlags, CliContext } from '../context';
import { formatTable } from '../table';
import { withApiFlags } from './api-flags';

type UsageFlags = ApiFlags & { from?: string; to?: string; groupBy?: string; json?: boolean };
type UsageRow = Schemas['UsageRow'];

/** The columns of each dimension, in the order the rows are grouped. */
const COLUMNS: Record<string, { header: string; cell: (r: UsageRow) => string }[]> = {
  day: [{ header: 'DAY', cell: (r) => r.day ?? '' }],
  model: [{ header: 'MODEL', cell: (r) => r.model ?? '' }],
  template: [{ header: 'TEMPLATE', cell: (r) => r.template_name ?? r.template_id ?? '-' }],
  workflow: [{ header: 'WORKFLOW', cell: (r) => r.workflow_name ?? r.workflow_id ?? '-' }],
  thread: [{ header: 'THREAD', cell: (r) => r.thread_id ?? '-' }],
};

const cost = (usd: number | null) => (usd === null ? '-' : `$${usd.toFixed(4)}`);

export function registerUsageCommands(program: Command, ctx: CliContext): void {
  withApiFlags(program.command('usage'))
    .description('your model usage: tokens, calls and cost by day, model, template, workflow or thread')
    .option('--from <day>', 'first UTC day, YYYY-MM-DD (default: 29 days before --to)')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD (default: today)')
    .option('--group-by <dims>', 'day, model, template, workflow and/or thread, comma-separated (default: day)')
    .option('--json', 'the answer as JSON instead of a table')
    .action(async (flags: UsageFlags) => {
      const api = ctx.api(flags);
      const query = {
        ...(flags.from ? { from: flags.from } : {}),
        ...(flags.to ? { to: flags.to } : {}),
        ...(flags.groupBy ? { group_by: flags.groupBy } : {}),
      };
      const answer = api.http.GET('/api/v1/usage', { params: { query } });
      const usage = (await api.unwrap('GET /usage', answer)).data;
      if (flags.json) {
        ctx.io.out(JSON.stringify(usage));
        return;
      }
      const columns = usage.group_by.flatMap((d) => COLUMNS[d] ?? []);
      const header = [...columns.map((c) => c.header), 'INPUT', 'OUTPUT', 'CALLS', 'COST'];
      const counts = (r: { input_tokens: number; output_tokens: number; calls: number; cost_usd: number | null }) => [
        String(r.input_tokens),
        String(r.output_tokens),
        String(r.calls),
        cost(r.cost_usd),
      ];
      const rows = usage.rows.map((r) => [...columns.map((c) => c.cell(r)), ...counts(r)]);
      const total = [...columns.map((_, i) => (i === 0 ? 'TOTAL' : '')), ...counts(usage.total)];
      ctx.io.out(`usage ${usage.from} … ${usage.to} (${usage.currency})`);
      for (const line of formatTable(header, [...rows, total])) ctx.io.out(line);
    });
}
