/**
 * `runs list|watch|rerun` (and `start|get|cancel`, ./run-control.ts): a user's commands over the HTTP API, acting
 * with their API key (not the database: the API is what enforces owner isolation, and the same commands work against
 * a remote Stepwise).
 */
import type { Command } from 'commander';
import { RUN_STATUSES } from '../../client/values';
import { idempotencyHeader } from '../api-client';
import type { CliContext, ApiFlags } from '../context';
import { CliError } from '../errors';
import { printList } from '../table';
import { formatDuration } from '../watch/render';
import { wholeNumber, withApiFlags } from './api-flags';
import { registerRunControlCommands, watchAndExit } from './run-control';

interface ListFlags extends ApiFlags {
  status?: string;
  workflow?: string;
  since?: string;
  until?: string;
  search?: string;
  limit: string;
  json?: boolean;
}

function statuses(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = list.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0 || list.length === 0) {
    throw new CliError(`--status: ${unknown.join(', ') || '(empty)'} is not one of ${RUN_STATUSES.join(', ')}`);
  }
  return list;
}

/** An ISO 8601 instant for the API; a bare date (`2025-01-31`) is read as midnight UTC. */
function instant(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new CliError(`${flag}: "${value}" is not a date or time (ISO 8601, e.g. 2025-01-31T12:00Z)`);
  return new Date(ms).toISOString();
}

export function registerRunCommands(program: Command, ctx: CliContext): void {
  const runs = program.command('runs').description('your runs, through the API (--api-key or STEPWISE_API_KEY)');

  registerRunControlCommands(runs, ctx);

  withApiFlags(runs.command('list'))
    .description('your runs across all workflows, newest first')
    .option('--status <statuses>', `comma-separated: ${RUN_STATUSES.join(', ')}`)
    .option('--workflow <id>', 'only the runs of this workflow (wf_…)')
    .option('--since <time>', 'created at or after (ISO 8601)')
    .option('--until <time>', 'created before (ISO 8601)')
    .option('--search <text>', 'text in the workflow name (case-insensitive)')
    .option('--limit <n>', 'how many runs at most', '50')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (flags: ListFlags) => {
      const filter = {
        status: statuses(flags.status)?.join(','),
        workflow_id: flags.workflow,
        created_after: instant('--since', flags.since),
        created_before: instant('--until', flags.until),
        q: flags.search,
      };
      const limit = wholeNumber('--limit', flags.limit, 10_000);
      const api = ctx.api(flags);
      const found = await api.list(
        'GET /runs',
        (page) => api.http.GET('/api/v1/runs', { params: { query: { ...filter, ...page } } }),
        limit,
      );
      printList(ctx.io, found, {
        json: flags.json,
        empty: 'no runs match',
        header: ['RUN', 'WORKFLOW', 'STATUS', 'CREATED', 'DURATION', 'TOKENS'],
        row: (r) => [
          r.run_id,
          r.workflow_name,
          r.status,
          r.created_at,
          r.duration_ms === null ? '-' : formatDuration(r.duration_ms),
          String(r.usage.input_tokens + r.usage.output_tokens),
        ],
      });
    });

  withApiFlags(runs.command('watch'))
    .description('follow a run live until it ends; exit code 0 if it completed, 1 if not')
    .argument('<run-id>', 'the run (run_…)')
    .option('--json', 'print each event as one JSON object per line')
    .action(async (runId: string, flags: ApiFlags & { json?: boolean }) => {
      await watchAndExit(ctx, flags, runId, flags.json ?? false);
    });

  withApiFlags(runs.command('rerun'))
    .description("start a new run of a run's snapshot, reusing the outputs of the steps before --from-step")
    .argument('<run-id>', 'the run to rerun (run_…)')
    .option('--from-step <step-id>', 'rerun from this step (default: the first step that did not complete)')
    .option(
      '--model <step-id>=<provider:model>',
      "run this agent step again on another model (repeatable), e.g. after fixing a provider's configuration",
      collectModel,
      {} as Record<string, string>,
    )
    .option('--idempotency-key <key>', 'repeat the command safely: the same key starts one run')
    .option('--watch', 'follow the new run until it ends (exit code as `runs watch`)')
    .option('--json', 'with --watch: the events as JSON lines')
    .action(
      async (
        runId: string,
        flags: ApiFlags & {
          fromStep?: string;
          model: Record<string, string>;
          idempotencyKey?: string;
          watch?: boolean;
          json?: boolean;
        },
      ) => {
        const api = ctx.api(flags);
        const models = Object.entries(flags.model);
        const answer = api.http.POST('/api/v1/workflows/runs/{runId}/rerun', {
          params: { path: { runId }, header: idempotencyHeader(flags.idempotencyKey) },
          body: {
            ...(flags.fromStep === undefined ? {} : { from_step: flags.fromStep }),
            ...(models.length
              ? { overrides: Object.fromEntries(models.map(([step, model]) => [step, { model }])) }
              : {}),
          },
        });
        const started = (await api.unwrap('POST …/rerun', answer)).data;
        ctx.io.out(started.run_id);
        const from = flags.fromStep ? ` from step ${flags.fromStep}` : '';
        const on = models.length ? ` with ${models.map(([step, model]) => `${step} on ${model}`).join(', ')}` : '';
        ctx.io.err(`Started ${started.run_id}, a rerun of ${started.rerun_of ?? runId}${from}${on}.`);
        if (flags.watch) await watchAndExit(ctx, flags, started.run_id, flags.json ?? false);
        else ctx.io.err(`Follow it with: npm run cli -- runs watch ${started.run_id}`);
      },
    );
}

/** `--model draft=compat:llama3.2`, repeatable: one entry per step (the server checks the step and the model). */
function collectModel(value: string, previous: Record<string, string>): Record<string, string> {
  const match = /^([^=\s]+)=(\S+:\S+)$/.exec(value);
  if (!match?.[1] || !match[2]) throw new CliError(`--model: "${value}" is not <step-id>=<provider:model>`);
  return { ...previous, [match[1]]: match[2] };
}
