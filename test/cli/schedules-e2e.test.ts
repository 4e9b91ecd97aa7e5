/**
 * `schedules …` end to end: the CLI (in-process, as the entrypoint runs it) against the real API on a socket, with a
 * real worker and Temporal: create (cron in a time zone, and an interval), list, get with its runs, pause, trigger,
 * resume, delete; a bad spec is the API's 400 message.
 */
import { loadConfig } from '../../config';
import { runCli } from '../../cli/run';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createWorkflow } from '../helpers/workflows';

describe('CLI schedules against the real API', () => {
  let g: GraphStack;
  let url: string;
  const made: string[] = [];

  beforeAll(async () => {
    g = await startGraphStack({ SCHEDULE_MIN_INTERVAL_SECONDS: '2' });
    url = await g.api.listen();
  }, 60_000);
  afterAll(async () => {
    for (const id of made)
      await g?.api.temporal.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    await g?.stop();
  });

  const cli = async (...args: string[]) => {
    const config = loadConfig({ STEPWISE_URL: url, STEPWISE_API_KEY: g.user.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, config, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  };

  it('create, list, get, pause, trigger, resume, delete', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('cli-sched'),
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: 'n', data: '{{input}}' } }],
    });
    const weekday = await cli('schedules', 'create', wf, '--cron', '0 8 * * 1-5', '--tz', 'Europe/Berlin', '--paused');
    expect(weekday.code).toBe(0);
    const [weekdayId, state, when] = weekday.out[0]!.split('\t');
    made.push(weekdayId!);
    expect([state, when]).toEqual(['paused', '0 8 * * 1-5 (Europe/Berlin)']);
    expect(weekday.out.filter((l) => l.startsWith('next\t'))).toHaveLength(3);

    const every = await cli('schedules', 'create', wf, '--every', '2', '--input', '{"n":5}');
    expect(every.code).toBe(0);
    const id = every.out[0]!.split('\t')[0]!;
    made.push(id);

    const listed = await cli('schedules', 'list', wf, '--json');
    expect(listed.out.map((l) => (JSON.parse(l) as { id: string }).id).sort()).toEqual([weekdayId, id].sort());

    // Poll `get` until a run of the interval schedule has completed.
    const deadline = Date.now() + 40_000;
    let runs: string[] = [];
    while (Date.now() < deadline) {
      runs = (await cli('schedules', 'get', id)).out.filter((l) => l.startsWith('run\t') && l.endsWith('\tcompleted'));
      if (runs.length > 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(runs.length).toBeGreaterThan(0);

    expect((await cli('schedules', 'pause', id, '--note', 'quiet')).out).toEqual([`${id}\tpaused`]);
    expect((await cli('schedules', 'trigger', weekdayId!)).out).toEqual([`${weekdayId}\ttriggered`]);
    expect((await cli('schedules', 'resume', id)).out).toEqual([`${id}\tactive`]);
    // Resumed on Temporal's side too (a resume without a note must not be a silent no-op).
    const until = Date.now() + 15_000;
    while ((await g.api.temporal.schedule.getHandle(id).describe()).state.paused && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await g.api.temporal.schedule.getHandle(id).describe()).state.paused).toBe(false);
    expect((await cli('schedules', 'delete', id)).out).toEqual([`deleted ${id}`]);
    const gone = await cli('schedules', 'get', id);
    expect(gone.code).not.toBe(0);

    const bad = await cli('schedules', 'create', wf, '--cron', '0 8 * * 1-5', '--tz', 'Mars/Base');
    expect(bad.code).not.toBe(0);
    expect(bad.err.join('\n')).toContain('spec.time_zone');
  }, 90_000);
});
