/** `approvals list|approve|reject`: the caller's approvals inbox, through the API with their key. */
import type { Command } from 'commander';
import type { CliContext, ApiFlags } from '../context';
import { printList } from '../table';
import { withApiFlags } from './api-flags';

/** Everything waiting is listed: an inbox shown in part would hide decisions. Past this, narrow it down in the API. */
const INBOX_MAX = 1000;

export function registerApprovalCommands(program: Command, ctx: CliContext): void {
  const approvals = program
    .command('approvals')
    .description('steps waiting for your decision, through the API (--api-key or STEPWISE_API_KEY)');

  withApiFlags(approvals.command('list'))
    .description('the approval steps and destructive MCP tool calls waiting for you, across all your runs')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const waiting = await api.list(
        'GET /approvals',
        (page) => api.http.GET('/api/v1/approvals', { params: { query: page } }),
        INBOX_MAX,
      );
      printList(ctx.io, waiting, {
        json: flags.json,
        empty: 'nothing is waiting for your decision',
        header: ['RUN', 'STEP', 'WORKFLOW', 'WAITING SINCE', 'DEADLINE', 'MESSAGE'],
        row: (a) => [a.run_id, a.step_id, a.workflow_name, a.waiting_since, a.deadline ?? '-', a.message ?? ''],
      });
    });

  const decide = (name: 'approve' | 'reject', approved: boolean, what: string) =>
    withApiFlags(approvals.command(name))
      .description(what)
      .argument('<run-id>', 'the run (run_…)')
      .argument(
        '<step-id>',
        'the waiting step (an approval step, or an agent step before an MCP tool call): its id, or review[2] / ' +
          'review#3 inside a map or loop',
      )
      .option('--comment <text>', 'a note recorded with the decision')
      .action(async (runId: string, stepId: string, flags: ApiFlags & { comment?: string }) => {
        const api = ctx.api(flags);
        const answer = api.http.POST('/api/v1/workflows/runs/{runId}/approve', {
          params: { path: { runId } },
          body: { step_id: stepId, approved, ...(flags.comment === undefined ? {} : { comment: flags.comment }) },
        });
        const decided = (await api.unwrap('POST …/approve', answer)).data;
        ctx.io.out(`${decided.approved ? 'approved' : 'rejected'} ${decided.run_id} ${decided.step_id}`);
      });
  decide('approve', true, 'approve a waiting step: the run goes on');
  decide('reject', false, 'reject a waiting step: an approval step fails (rejected); an agent step is told no');
}
