/**
 * `runs start|get|cancel`: start a workflow's run, read one run, cancel one, through the API with the key. The run id
 * is what `start` prints on stdout, so a script can capture it (`RUN=$(npm run -s cli -- runs start wf_…)`).
 */
import type { Command } from 'commander';
import { idempotencyHeader, type RunStatusBody } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { formatTable } from '../table';
import { watchRun } from '../watch/follow';
import { formatDuration } from '../watch/render';
import { withApiFlags } from './api-flags';
import { inputFrom } from './run-input';

/** An output longer than this is cut in the text view (`--json` has all of it). */
const OUTPUT_SHOWN_CHARS = 200;

/** Follows a run and sets the exit code: 0 when it completed, 1 when it failed, was cancelled or timed out. */
export async function watchAndExit(ctx: CliContext, flags: ApiFlags, runId: string, json: boolean): Promise<void> {
  const end = await watchRun(ctx.api(flags), ctx.io, runId, { json });
  if (end.status !== 'completed') {
    if (!json) ctx.io.err(`run ${runId} ${end.status}${end.message ? `: ${end.message}` : ''}`);
    ctx.exitCode = 1;
  }
}

const since = (from: string | null | undefined, to: string | null | undefined, now: number): string => {
  if (!from) return '-';
  return formatDuration((to ? Date.parse(to) : now) - Date.parse(from));
};

/** The text view of a run: a title as `runs watch` draws it, the run's facts, its steps, its outputs. */
export function runLines(run: RunStatusBody, now: number): string[] {
  const tokens = run.usage ? run.usage.input_tokens + run.usage.output_tokens : 0;
  const lines = [
    `${run.run_id}  ${run.workflow_name}  ${run.status}`,
    [
      `workflow ${run.workflow_id}`,
      `created ${run.created_at ?? '-'}`,
      `duration ${since(run.created_at, run.completed_at, now)}`,
      `tokens ${tokens}`,
    ].join('  '),
  ];
  if (run.error) {
    const at = run.error.step_id ? ` (step ${run.error.step_id})` : '';
    lines.push(`error ${run.error.reason}: ${run.error.message}${at}`);
  }
  lines.push('');
  const rows = run.steps.map((s) => [
    s.id,
    s.status,
    String(s.attempts),
    String(s.usage.input_tokens + s.usage.output_tokens),
    since(s.started_at, s.completed_at, now),
    s.error ? `${s.error.reason}: ${s.error.message}` : '',
  ]);
  lines.push(...formatTable(['STEP', 'STATUS', 'ATTEMPTS', 'TOKENS', 'DURATION', 'ERROR'], rows));
  const outputs = Object.entries(run.outputs ?? {});
  if (outputs.length > 0) {
    lines.push('', 'outputs:');
    for (const [id, value] of outputs) {
      const text = JSON.stringify(value) ?? 'null';
      const cut = text.length > OUTPUT_SHOWN_CHARS;
      lines.push(`  ${id}: ${cut ? `${text.slice(0, OUTPUT_SHOWN_CHARS)}… (--json for all)` : text}`);
    }
  }
  return lines;
}

type StartFlags = ApiFlags & {
  input?: string;
  inputFile?: string;
  idempotencyKey?: string;
  watch?: boolean;
  json?: boolean;
};

export function registerRunControlCommands(runs: Command, ctx: CliContext): void {
  withApiFlags(runs.command('start'))
    .description("start a run of a workflow; prints the run id (the 202 answer's JSON with --json)")
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--input <json>', "the run input, a JSON object (checked against the workflow's input_schema)")
    .option('--input-file <file>', 'the run input from a JSON file')
    .option('--idempotency-key <key>', 'repeat the command safely: the same key and input start one run')
    .option('--watch', 'follow the run until it ends (exit code as `runs watch`)')
    .option('--json', 'the answer as JSON; with --watch, the events as JSON lines')
    .action(async (workflowId: string, flags: StartFlags) => {
      const input = inputFrom(flags);
      const api = ctx.api(flags);
      const answer = api.http.POST('/api/v1/workflows/{id}/run', {
        params: { path: { id: workflowId }, header: idempotencyHeader(flags.idempotencyKey) },
        // The server checks the input against the workflow's input schema.
        body: input === undefined ? {} : { input },
      });
      const started = (await api.unwrap('POST …/run', answer)).data;
      ctx.io.out(flags.json ? JSON.stringify(started) : started.run_id);
      if (flags.watch) await watchAndExit(ctx, flags, started.run_id, flags.json ?? false);
      else ctx.io.err(`Started ${started.run_id}. Follow it with: npm run cli -- runs watch ${started.run_id}`);
    });

  withApiFlags(runs.command('get'))
    .description('one run: status, error, steps (status, attempts, tokens, duration, error) and outputs')
    .argument('<run-id>', 'the run (run_…)')
    .option('--json', 'the whole status body (GET …/runs/:runId/status) as JSON')
    .action(async (runId: string, flags: ApiFlags & { json?: boolean }) => {
      const run = await ctx.api(flags).runStatus(runId);
      if (flags.json) {
        ctx.io.out(JSON.stringify(run));
        return;
      }
      for (const line of runLines(run, Date.now())) ctx.io.out(line);
    });

  withApiFlags(runs.command('cancel'))
    .description('cancel a run: its running step is cancelled and the run ends cancelled')
    .argument('<run-id>', 'the run (run_…)')
    .option('--json', 'the answer as JSON')
    .action(async (runId: string, flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const { data } = await api.unwrap(
        'POST …/cancel',
        api.http.POST('/api/v1/workflows/runs/{runId}/cancel', { params: { path: { runId } } }),
      );
      ctx.io.out(flags.json ? JSON.stringify(data) : `cancel requested ${data.run_id}`);
    });
}
