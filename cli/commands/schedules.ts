/**
 * `schedules list|create|get|pause|resume|trigger|backfill|delete`: a workflow's schedules (Temporal Schedules that
 * start its runs), through the API with the key.
 */
import type { Command } from 'commander';
import type { ScheduleBody, ScheduleItem } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { printList } from '../table';
import { withApiFlags } from './api-flags';
import { parseInput } from './run-input';

const SCHEDULES_MAX = 1000;

function specText(s: ScheduleItem): string {
  const when = s.spec.cron ? s.spec.cron.join(' | ') : `every ${s.spec.interval?.every_seconds ?? '?'} s`;
  return s.spec.time_zone ? `${when} (${s.spec.time_zone})` : when;
}

export function registerScheduleCommands(program: Command, ctx: CliContext): void {
  const schedules = program
    .command('schedules')
    .description("a workflow's schedules, through the API (--api-key or STEPWISE_API_KEY)");

  const show = (s: ScheduleItem) => {
    ctx.io.out(`${s.id}\t${s.state.paused ? 'paused' : 'active'}\t${specText(s)}`);
    for (const t of s.next_run_times.slice(0, 3)) ctx.io.out(`next\t${t}`);
    for (const r of s.recent_runs) ctx.io.out(`run\t${r.run_id}\t${r.status}`);
  };

  withApiFlags(schedules.command('list'))
    .description("the workflow's schedules")
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (workflowId: string, flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const list = await api.list(
        'GET …/schedules',
        (page) =>
          api.http.GET('/api/v1/workflows/{id}/schedules', { params: { path: { id: workflowId }, query: page } }),
        SCHEDULES_MAX,
      );
      printList(ctx.io, list, {
        json: flags.json,
        empty: `no schedules; make one with: npm run cli -- schedules create ${workflowId} --cron '0 8 * * 1-5'`,
        header: ['SCHEDULE', 'STATE', 'WHEN', 'NEXT RUN'],
        row: (s) => [s.id, s.state.paused ? 'paused' : 'active', specText(s), s.next_run_times[0] ?? '-'],
      });
    });

  withApiFlags(schedules.command('create'))
    .description('a new schedule: prints its id, state and spec, then its next run times')
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--cron <expression>', 'a cron expression, e.g. "0 8 * * 1-5" (repeat for several)', collect, [])
    .option('--every <seconds>', 'an interval in seconds instead of cron')
    .option('--tz <zone>', 'IANA time zone of the cron expressions, e.g. Europe/Berlin')
    .option('--input <json>', 'the run input of every run (a JSON object)')
    .option('--overlap <policy>', 'skip | buffer_one | allow_all | cancel_other (default skip)')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note shown with its state')
    .action(
      async (
        workflowId: string,
        flags: ApiFlags & {
          cron: string[];
          every?: string;
          tz?: string;
          input?: string;
          overlap?: string;
          paused?: boolean;
          note?: string;
        },
      ) => {
        // Exactly one of cron and interval, and a listed zone: checked by the server (a 400 names the field).
        const spec = {
          ...(flags.cron.length > 0 ? { cron: flags.cron } : {}),
          ...(flags.every !== undefined ? { interval: { every_seconds: Number(flags.every) } } : {}),
          ...(flags.tz !== undefined ? { time_zone: flags.tz } : {}),
        } as ScheduleBody['spec'];
        const input = parseInput(flags.input);
        const body: ScheduleBody = {
          spec,
          ...(input ? { input } : {}),
          // Checked by the server (a 400 names the allowed values).
          ...(flags.overlap !== undefined ? { overlap: flags.overlap as NonNullable<ScheduleBody['overlap']> } : {}),
          ...(flags.paused ? { paused: true } : {}),
          ...(flags.note !== undefined ? { note: flags.note } : {}),
        };
        const api = ctx.api(flags);
        const answer = api.http.POST('/api/v1/workflows/{id}/schedules', {
          params: { path: { id: workflowId } },
          body,
        });
        show((await api.unwrap('POST …/schedules', answer)).data);
      },
    );

  withApiFlags(schedules.command('get'))
    .description('one schedule: state, next run times, recent runs (--json for the whole body)')
    .argument('<schedule-id>', 'the schedule (sch_…)')
    .option('--json', 'the body as JSON')
    .action(async (scheduleId: string, flags: ApiFlags & { json?: boolean }) => {
      const api = ctx.api(flags);
      const answer = api.http.GET('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
      const s = (await api.unwrap('GET /schedules/…', answer)).data;
      if (flags.json) ctx.io.out(JSON.stringify(s));
      else show(s);
    });

  for (const [name, what] of [
    ['pause', 'pause a schedule (no runs until resumed)'],
    ['resume', 'resume a paused schedule'],
  ] as const) {
    withApiFlags(schedules.command(name))
      .description(what)
      .argument('<schedule-id>', 'the schedule (sch_…)')
      .option('--note <text>', 'why (shown with its state)')
      .action(async (scheduleId: string, flags: ApiFlags & { note?: string }) => {
        const api = ctx.api(flags);
        const body = flags.note !== undefined ? { note: flags.note } : {};
        await api.unwrap(
          `POST /schedules/…/${name}`,
          api.http.POST(`/api/v1/schedules/{scheduleId}/${name}`, { params: { path: { scheduleId } }, body }),
        );
        ctx.io.out(`${scheduleId}\t${name === 'pause' ? 'paused' : 'active'}`);
      });
  }

  withApiFlags(schedules.command('trigger'))
    .description('start one run now')
    .argument('<schedule-id>', 'the schedule (sch_…)')
    .action(async (scheduleId: string, flags: ApiFlags) => {
      const api = ctx.api(flags);
      const answer = api.http.POST('/api/v1/schedules/{scheduleId}/trigger', { params: { path: { scheduleId } } });
      await api.unwrap('POST /schedules/…/trigger', answer);
      ctx.io.out(`${scheduleId}\ttriggered`);
    });

  withApiFlags(schedules.command('backfill'))
    .description('start the runs the schedule would have started in a past time range')
    .argument('<schedule-id>', 'the schedule (sch_…)')
    .requiredOption('--from <time>', 'start of the range (ISO 8601)')
    .requiredOption('--to <time>', 'end of the range (ISO 8601, in the past)')
    .action(async (scheduleId: string, flags: ApiFlags & { from: string; to: string }) => {
      const api = ctx.api(flags);
      const answer = api.http.POST('/api/v1/schedules/{scheduleId}/backfill', {
        params: { path: { scheduleId } },
        body: { start_at: flags.from, end_at: flags.to },
      });
      await api.unwrap('POST /schedules/…/backfill', answer);
      ctx.io.out(`${scheduleId}\tbackfilled`);
    });

  withApiFlags(schedules.command('delete'))
    .description('delete a schedule (runs already started go on)')
    .argument('<schedule-id>', 'the schedule (sch_…)')
    .action(async (scheduleId: string, flags: ApiFlags) => {
      const api = ctx.api(flags);
      const answer = api.http.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
      await api.unwrap('DELETE /schedules/…', answer);
      ctx.io.out(`deleted ${scheduleId}`);
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
