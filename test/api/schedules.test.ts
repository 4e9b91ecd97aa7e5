/**
 * Schedules on the real stack (real Temporal dev server, real worker, real database): an interval schedule produces
 * runs that carry its id; pause stops them and resume restarts them; trigger-now and a backfill over a past range
 * start the expected number of runs; `overlap: skip` with a long run starts no second run; a run whose template was
 * deleted is recorded failed with its reason; deleting the workflow deletes its schedules; the weekday-08:00 example
 * in Europe/Berlin; validation and limits; owner isolation on every route. Short intervals and polling, no sleeps
 * (the dev server has no time skipping).
 */
import { ScheduleNotFoundError } from '@temporalio/client';
import { schedulesCollection } from '../../db/schedules';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { openApiChecker } from '../helpers/openapi';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, waitForStatus } from '../helpers/workflows';

interface ScheduleBody {
  id: string;
  workflow_id: string;
  spec: Record<string, unknown>;
  overlap: string;
  state: { paused: boolean; note: string | null };
  counts: { runs_started: number; skipped_for_overlap: number };
  next_run_times: string[];
  recent_runs: { run_id: string; status: string; error: { reason: string; message: string } | null }[];
}
interface RunItem {
  run_id: string;
  status: string;
  schedule_id?: string;
  error: { reason: string; message: string } | null;
}

const SCHEDULED_RUN_ID = /^run_[A-Za-z0-9_-]+-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** Polls `read` until `until` holds (no fixed sleeps); fails with the last value after `timeoutMs`. */
async function poll<T>(read: () => Promise<T>, until: (v: T) => boolean, what: string, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (until(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not reached within ${timeoutMs} ms; last ${JSON.stringify(last)}`);
}

describe('schedules', () => {
  let g: GraphStack;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    g = await startGraphStack({
      SCHEDULE_MIN_INTERVAL_SECONDS: '2',
      SCHEDULES_MAX_PER_USER: '8',
      USER_MAX_CONCURRENT_RUNS: '50',
    });
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(async () => {
    // The dev server outlives this file: its schedules must not keep firing.
    if (g) {
      const ids = await schedulesCollection(g.api.database.db).distinct('_id');
      for (const id of ids)
        await g.api.temporal.schedule
          .getHandle(id)
          .delete()
          .catch(() => undefined);
    }
    await g?.stop();
  });

  const echoWorkflow = (user = g.user, templateId = g.tpl.transform._id) =>
    createWorkflow(g.api, user, {
      name: uniqueId('scheduled'),
      steps: [{ id: 'echo', template_id: templateId, config: { expression: 'n', data: '{{input}}' } }],
    });
  const create = async (workflowId: string, body: Record<string, unknown>, user = g.user) => {
    const res = await g.api.http.post(`/api/v1/workflows/${workflowId}/schedules`).set(user.auth).send(body);
    oas.check(res);
    if (res.status !== 201) throw new Error(`create schedule: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: ScheduleBody }).data;
  };
  const get = async (id: string) => {
    const res = await g.api.http.get(`/api/v1/schedules/${id}`).set(g.user.auth);
    oas.check(res);
    expect(res.status).toBe(200);
    return (res.body as { data: ScheduleBody }).data;
  };
  const post = async (id: string, action: string, body: Record<string, unknown> = {}) => {
    const res = await g.api.http.post(`/api/v1/schedules/${id}/${action}`).set(g.user.auth).send(body);
    oas.check(res);
    return res;
  };
  /** The schedule's runs, from the run search's schedule_id filter. */
  const runsOf = async (scheduleId: string): Promise<RunItem[]> => {
    const res = await g.api.http.get(`/api/v1/runs?schedule_id=${scheduleId}&limit=200`).set(g.user.auth);
    oas.check(res);
    expect(res.status).toBe(200);
    return (res.body as { data: RunItem[] }).data;
  };

  it('an interval schedule starts runs that carry its id; pause stops them, resume restarts them', async () => {
    const wf = await echoWorkflow();
    const s = await create(wf, { spec: { interval: { every_seconds: 2 } }, input: { n: 7 } });
    expect(s).toMatchObject({ workflow_id: wf, overlap: 'skip', state: { paused: false } });
    expect(s.next_run_times.length).toBeGreaterThan(1);

    const runs = await poll(
      () => runsOf(s.id),
      (r) => r.filter((x) => x.status === 'completed').length >= 2,
      'two completed scheduled runs',
    );
    for (const run of runs) {
      expect(run.run_id).toMatch(SCHEDULED_RUN_ID);
      expect(run.schedule_id).toBe(s.id);
    }
    const done = runs.find((r) => r.status === 'completed')!;
    const status = await waitForStatus(g.api, g.user, done.run_id, isTerminal);
    expect(status).toMatchObject({ schedule_id: s.id, workflow_id: wf, input: { n: 7 }, outputs: { echo: 7 } });
    // In the workflow's own run list too.
    const listed = await g.api.http.get(`/api/v1/workflows/${wf}/runs?limit=200`).set(g.user.auth);
    oas.check(listed);
    expect((listed.body as { data: RunItem[] }).data.map((r) => r.run_id)).toContain(done.run_id);
    // The schedule's body shows its recent runs with their status.
    const read = await poll(
      () => get(s.id),
      (b) => b.recent_runs.some((r) => r.run_id === done.run_id && r.status === 'completed'),
      'recent runs',
    );
    expect(read.counts.runs_started).toBeGreaterThanOrEqual(2);

    const paused = await post(s.id, 'pause', { note: 'maintenance' });
    expect(paused.status).toBe(200);
    expect((paused.body as { data: ScheduleBody }).data.state).toEqual({ paused: true, note: 'maintenance' });
    // Let any fire taken just before the pause settle, then no run starts across several intervals.
    const settled = (
      await poll(
        () => get(s.id),
        (b) => b.recent_runs.every((r) => r.status !== 'queued' && r.status !== 'running'),
        'settled',
      )
    ).counts.runs_started;
    const watchUntil = Date.now() + 5_000;
    while (Date.now() < watchUntil) {
      expect((await get(s.id)).counts.runs_started).toBe(settled);
      await new Promise((r) => setTimeout(r, 500));
    }
    const before = (await runsOf(s.id)).length;

    const resumed = await post(s.id, 'resume', { note: 'back' });
    expect(resumed.status).toBe(200);
    expect((resumed.body as { data: ScheduleBody }).data.state).toEqual({ paused: false, note: 'back' });
    await poll(
      () => runsOf(s.id),
      (r) => r.length > before,
      'a run after resume',
    );
    await post(s.id, 'pause');
  }, 120_000);

  it('trigger-now starts one run of a paused schedule; a backfill over a past range starts one run per fire', async () => {
    const wf = await echoWorkflow();
    const s = await create(wf, { spec: { interval: { every_seconds: 10 } }, input: { n: 1 }, paused: true });
    expect(s.state.paused).toBe(true);

    const trig = await post(s.id, 'trigger');
    expect(trig.status).toBe(202);
    const one = await poll(
      () => runsOf(s.id),
      (r) => r.length === 1 && isTerminal(r[0] as never),
      'triggered run',
    );
    expect(one[0]).toMatchObject({ status: 'completed', schedule_id: s.id });

    // Fires of a 10 s interval at A, A+10, A+20 inside [A-5, A+25]: three runs.
    const aligned = Math.floor(Date.now() / 10_000) * 10_000 - 120_000;
    const back = await post(s.id, 'backfill', {
      start_at: new Date(aligned - 5_000).toISOString(),
      end_at: new Date(aligned + 25_000).toISOString(),
    });
    expect(back.status).toBe(202);
    const all = await poll(
      () => runsOf(s.id),
      (r) => r.length >= 4 && r.every((x) => x.status === 'completed'),
      'backfilled runs',
    );
    expect(all).toHaveLength(4);
    const stamps = all.map((r) => r.run_id.slice(-20)).sort();
    expect(stamps.slice(0, 3)).toEqual(
      [0, 10_000, 20_000].map((d) => new Date(aligned + d).toISOString().replace('.000Z', 'Z')),
    );

    // A future range is refused.
    const future = await post(s.id, 'backfill', {
      start_at: new Date(Date.now() - 1000).toISOString(),
      end_at: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(future.status).toBe(400);
  }, 120_000);

  it('a backfill of a cron spec is bounded by the runs it would start, as an interval is', async () => {
    const wf = await echoWorkflow();
    const s = await create(wf, { spec: { cron: '* * * * *' }, input: { n: 3 }, paused: true });
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 3 * 3_600_000;
    // Two hours of a per-minute cron: 120 runs, refused before Temporal hears of it.
    const tooMany = await post(s.id, 'backfill', {
      start_at: new Date(minute).toISOString(),
      end_at: new Date(minute + 2 * 3_600_000).toISOString(),
    });
    expect(tooMany.status).toBe(400);
    expect((tooMany.body as { error: string }).error).toMatch(/^end_at: the range holds more than 100 runs/);
    // Three fires (minute+30 s … minute+150 s): taken.
    const few = await post(s.id, 'backfill', {
      start_at: new Date(minute + 30_000).toISOString(),
      end_at: new Date(minute + 210_000).toISOString(),
    });
    expect(few.status).toBe(202);
    const runs = await poll(
      () => runsOf(s.id),
      (r) => r.length >= 3 && r.every((x) => isTerminal(x as never)),
      'backfilled runs',
    );
    expect(runs).toHaveLength(3);
    expect((await get(s.id)).counts.runs_started).toBe(3);
  }, 120_000);

  it('overlap skip: while a long run is going, fires are skipped and no second run starts', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('long'),
      steps: [{ id: 'wait', template_id: g.tpl.delay._id, config: { seconds: 120 } }],
    });
    const s = await create(wf, { spec: { interval: { every_seconds: 2 } }, overlap: 'skip' });
    const first = await poll(
      () => runsOf(s.id),
      (r) => r.length === 1 && r[0]!.status === 'running',
      'first run',
    );
    // Temporal counts each fire it skipped: two of them prove two fires came while the run was going.
    await poll(
      () => get(s.id),
      (b) => b.counts.skipped_for_overlap >= 2,
      'skipped fires',
    );
    expect((await runsOf(s.id)).map((r) => r.run_id)).toEqual([first[0]!.run_id]);
    // Clean up: the schedule goes, the run is cancelled.
    const del = await g.api.http.delete(`/api/v1/schedules/${s.id}`).set(g.user.auth);
    oas.check(del);
    expect(del.status).toBe(200);
    await g.api.http.post(`/api/v1/workflows/runs/${first[0]!.run_id}/cancel`).set(g.user.auth);
  }, 120_000);

  it('a run whose template was deleted is recorded failed with its reason; deleting the workflow deletes its schedules', async () => {
    const own = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({ name: uniqueId('tpl'), default_prompt: 'x', step_type: 'action', action_type: 'transform' });
    expect(own.status).toBe(201);
    const tplId = (own.body as { data: { id: string } }).data.id;
    const wf = await echoWorkflow(g.user, tplId);
    const s = await create(wf, { spec: { cron: '0 3 1 1 *' } });
    expect((await g.api.http.delete(`/api/v1/agents/${tplId}`).set(g.user.auth)).status).toBe(200);

    expect((await post(s.id, 'trigger')).status).toBe(202);
    const [failed] = await poll(
      () => runsOf(s.id),
      (r) => r.length === 1 && r[0]!.status === 'failed',
      'failed run',
    );
    expect(failed!.error).toMatchObject({ reason: 'workflow_invalid', message: expect.stringContaining(tplId) });
    const body = await poll(
      () => get(s.id),
      (b) => b.recent_runs[0]?.status === 'failed',
      'recent failed run',
    );
    expect(body.recent_runs[0]!.error?.reason).toBe('workflow_invalid');

    const del = await g.api.http.delete(`/api/v1/workflows/${wf}`).set(g.user.auth);
    expect(del.status).toBe(200);
    expect((await g.api.http.get(`/api/v1/schedules/${s.id}`).set(g.user.auth)).status).toBe(404);
    await expect(g.api.temporal.schedule.getHandle(s.id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  }, 120_000);

  it('a run whose input no longer fits the edited input_schema is recorded failed (invalid_input); edits reach the next run', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('schema'),
      config: { input_schema: { type: 'object', required: ['n'] } },
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: 'n', data: '{{input}}' } }],
    });
    const s = await create(wf, { spec: { cron: '0 3 1 1 *' }, input: { n: 4 }, paused: true });
    // The schedule's input is checked on write too.
    const refused = await g.api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(g.user.auth)
      .send({ spec: { cron: '0 3 1 1 *' }, input: {} });
    oas.check(refused);
    expect(refused.status).toBe(400);

    const edited = await g.api.http
      .patch(`/api/v1/workflows/${wf}`)
      .set(g.user.auth)
      .send({ config: { input_schema: { type: 'object', required: ['m'] } } });
    expect(edited.status).toBe(200);
    expect((await post(s.id, 'trigger')).status).toBe(202);
    const [failed] = await poll(
      () => runsOf(s.id),
      (r) => r.length === 1 && isTerminal(r[0] as never),
      'run',
    );
    expect(failed).toMatchObject({ status: 'failed', error: { reason: 'invalid_input' } });
  }, 60_000);

  it('every weekday at 08:00 in Europe/Berlin: the next run times are 08:00 Berlin time, Monday to Friday', async () => {
    const wf = await echoWorkflow();
    const s = await create(wf, { spec: { cron: '0 8 * * 1-5', time_zone: 'Europe/Berlin' }, paused: true, note: 'x' });
    expect(s.spec).toEqual({ cron: ['0 8 * * 1-5'], time_zone: 'Europe/Berlin' });
    expect(s.next_run_times.length).toBeGreaterThanOrEqual(5);
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    });
    for (const t of s.next_run_times) {
      const text = berlin.format(new Date(t));
      expect(text).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 08:00$/);
    }
    // The schedule is the Temporal Schedule of the same id (what the Web UI's Schedules page lists).
    const described = await g.api.temporal.schedule.getHandle(s.id).describe();
    expect(described.spec.timezone).toBe('Europe/Berlin');

    // Changing it: an interval now, another input; the next runs follow.
    const patched = await g.api.http
      .patch(`/api/v1/schedules/${s.id}`)
      .set(g.user.auth)
      .send({ spec: { interval: { every_seconds: 3600 } }, input: { n: 2 }, overlap: 'buffer_one' });
    oas.check(patched);
    expect(patched.status).toBe(200);
    const after = (patched.body as { data: ScheduleBody }).data;
    expect(after).toMatchObject({ spec: { interval: { every_seconds: 3600 } }, overlap: 'buffer_one' });
    expect(after.state.paused).toBe(true);
    const gap = Date.parse(after.next_run_times[1]!) - Date.parse(after.next_run_times[0]!);
    expect(gap).toBe(3_600_000);

    // A cron schedule is created paused, checked, then resumed: the resume is not lost.
    const live = await create(wf, { spec: { cron: '0 8 * * 1-5', time_zone: 'Europe/Berlin' } });
    expect(live.state.paused).toBe(false);
    await poll(
      async () => (await g.api.temporal.schedule.getHandle(live.id).describe()).state.paused,
      (p) => !p,
      'resumed on Temporal',
      15_000,
    );
  }, 60_000);

  it('validates specs on write and enforces the per-user limit', async () => {
    const wf = await echoWorkflow();
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await g.api.http.post(`/api/v1/workflows/${wf}/schedules`).set(g.user.auth).send(body);
      oas.check(res);
      expect(res.status).toBe(400);
      expect((res.body as { error: string }).error).toContain(field);
    };
    await bad({ spec: { cron: '0 8 * * 1-5', time_zone: 'Mars/Base' } }, 'spec.time_zone');
    await bad({ spec: { cron: 'every morning' } }, 'spec');
    await bad({ spec: { interval: { every_seconds: 1 } } }, 'spec.interval.every_seconds');
    await bad({ spec: {} }, 'spec.cron');
    await bad({ spec: { cron: '0 8 * * *', interval: { every_seconds: 60 } } }, 'spec.cron');
    await bad({ spec: { cron: '0 8 * * *' }, overlap: 'sometimes' }, 'overlap');

    const fresh = await createTestUser(g.api.database.db);
    const theirs = await echoWorkflow(fresh, (await actionTemplates(g.api.database.db, fresh.id)).transform._id);
    for (let i = 0; i < 8; i++) await create(theirs, { spec: { cron: '0 3 1 1 *' }, paused: true }, fresh);
    const ninth = await g.api.http
      .post(`/api/v1/workflows/${theirs}/schedules`)
      .set(fresh.auth)
      .send({ spec: { cron: '0 3 1 1 *' }, paused: true });
    oas.check(ninth);
    expect(ninth.status).toBe(409);
  }, 60_000);

  it("owner isolation: another user's schedules are 404 on every route", async () => {
    const wf = await echoWorkflow();
    const s = await create(wf, { spec: { cron: '0 3 1 1 *' }, paused: true });
    const as = other.auth;
    const range = { start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-02T00:00:00Z' };
    const attempts = [
      g.api.http.get(`/api/v1/workflows/${wf}/schedules`).set(as),
      g.api.http
        .post(`/api/v1/workflows/${wf}/schedules`)
        .set(as)
        .send({ spec: { cron: '0 3 * * *' } }),
      g.api.http.get(`/api/v1/schedules/${s.id}`).set(as),
      g.api.http.patch(`/api/v1/schedules/${s.id}`).set(as).send({ input: {} }),
      g.api.http.post(`/api/v1/schedules/${s.id}/pause`).set(as).send({}),
      g.api.http.post(`/api/v1/schedules/${s.id}/resume`).set(as).send({}),
      g.api.http.post(`/api/v1/schedules/${s.id}/trigger`).set(as).send({}),
      g.api.http.post(`/api/v1/schedules/${s.id}/backfill`).set(as).send(range),
      g.api.http.delete(`/api/v1/schedules/${s.id}`).set(as),
    ];
    for (const res of await Promise.all(attempts)) {
      oas.check(res);
      expect(res.status).toBe(404);
    }
    // Nothing changed, nothing ran.
    const mine = await get(s.id);
    expect(mine.state.paused).toBe(true);
    expect(mine.counts.runs_started).toBe(0);
    // Unknown and malformed ids are the same 404.
    for (const id of ['sch_nope12345678', 'nope', 'run_abcdefghijkl']) {
      expect((await g.api.http.get(`/api/v1/schedules/${id}`).set(g.user.auth)).status).toBe(404);
    }
  }, 60_000);
});

describe('schedules under tighter limits', () => {
  let g: GraphStack;
  const oas = openApiChecker();

  beforeAll(async () => {
    g = await startGraphStack({ USER_MAX_CONCURRENT_RUNS: '1', SCHEDULE_MIN_INTERVAL_SECONDS: '120' });
  }, 60_000);
  afterAll(async () => {
    if (g) {
      const ids = await schedulesCollection(g.api.database.db).distinct('_id');
      for (const id of ids)
        await g.api.temporal.schedule
          .getHandle(id)
          .delete()
          .catch(() => undefined);
    }
    await g?.stop();
  });

  const runsOf = async (scheduleId: string): Promise<RunItem[]> => {
    const res = await g.api.http.get(`/api/v1/runs?schedule_id=${scheduleId}`).set(g.user.auth);
    return (res.body as { data: RunItem[] }).data;
  };

  it('a cron spec firing more often than SCHEDULE_MIN_INTERVAL_SECONDS is refused and not recorded', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('often'),
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: '1' } }],
    });
    const res = await g.api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(g.user.auth)
      .send({ spec: { cron: '* * * * *' } });
    oas.check(res);
    expect(res.status).toBe(400);
    expect((res.body as { error: string }).error).toMatch(/spec\.cron: fires 60 s apart; at least 120 s/);
    expect(await schedulesCollection(g.api.database.db).countDocuments({ workflow_id: wf })).toBe(0);
  }, 60_000);

  it('the minimum gap holds whatever the jitter and for every entry of a cron list, on create and on change', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('often'),
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: '1' } }],
    });
    const refused = async (spec: Record<string, unknown>, gap: RegExp) => {
      const res = await g.api.http.post(`/api/v1/workflows/${wf}/schedules`).set(g.user.auth).send({ spec });
      oas.check(res);
      expect(res.status).toBe(400);
      expect((res.body as { error: string }).error).toMatch(gap);
    };
    // Jitter only moves each fire by a random delay: a per-minute or per-second cron still fires that often.
    await refused({ cron: '* * * * *', jitter_seconds: 120 }, /spec\.cron: fires 60 s apart; at least 120 s/);
    await refused({ cron: '* * * * * * *', jitter_seconds: 3600 }, /spec\.cron: fires 1 s apart/);
    // Daily, except every minute in June: the next fire times (all daily) do not show it.
    await refused({ cron: ['0 3 * * *', '* * * 6 *'] }, /spec\.cron: fires 60 s apart/);
    // Every second from 2030 on (7 fields: seconds first, year last).
    await refused({ cron: ['0 3 * * *', '* * * * * * 2030-2035'] }, /spec\.cron: fires 1 s apart/);
    // Two entries a minute apart across midnight.
    await refused({ cron: ['59 23 * * *', '0 0 * * *'] }, /spec\.cron: fires 60 s apart/);
    // An @every entry beside another entry can fall any distance from its fires.
    await refused({ cron: ['@every 3600s', '30 * * * *'] }, /spec\.cron: an @every entry/);
    await refused({ cron: '@every 30s' }, /spec\.cron: fires 30 s apart/);
    expect(await schedulesCollection(g.api.database.db).countDocuments({ workflow_id: wf })).toBe(0);

    // Accepted: entries that never come closer than 120 s, and a jitter on a spec that is fine without it.
    const ok = await g.api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(g.user.auth)
      .send({ spec: { cron: ['0 3 * * 1', '2 3 * * 1', '0 3 * * 2'], jitter_seconds: 600 }, paused: true });
    oas.check(ok);
    expect(ok.status).toBe(201);
    const id = (ok.body as { data: ScheduleBody }).data.id;
    // A change to a list with a frequent entry is refused and leaves the schedule as it was.
    const patched = await g.api.http
      .patch(`/api/v1/schedules/${id}`)
      .set(g.user.auth)
      .send({ spec: { cron: ['0 3 * * 1', '*/1 * 29 2 *'] } });
    oas.check(patched);
    expect(patched.status).toBe(400);
    expect((patched.body as { error: string }).error).toMatch(/spec\.cron: fires 60 s apart/);
    const after = await g.api.http.get(`/api/v1/schedules/${id}`).set(g.user.auth);
    expect((after.body as { data: ScheduleBody }).data.spec).toEqual({
      cron: ['0 3 * * 1', '2 3 * * 1', '0 3 * * 2'],
      jitter_seconds: 600,
    });
    // The refused spec is checked apart: the live Temporal Schedule was never changed, not even for a moment.
    expect((await g.api.temporal.schedule.getHandle(id).describe()).info.lastUpdatedAt).toBeUndefined();
  }, 60_000);

  it('beyond USER_MAX_CONCURRENT_RUNS a scheduled run is recorded failed (concurrent_runs_exceeded)', async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('busy'),
      steps: [{ id: 'wait', template_id: g.tpl.delay._id, config: { seconds: 120 } }],
    });
    const created = await g.api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(g.user.auth)
      .send({ spec: { interval: { every_seconds: 120 } }, paused: true });
    expect(created.status).toBe(201);
    const id = (created.body as { data: ScheduleBody }).data.id;
    // Two fires (A and A+120 s) backfilled at once, both allowed to run: the later-recorded one finds the slot taken.
    const aligned = Math.floor(Date.now() / 120_000) * 120_000 - 600_000;
    const back = await g.api.http
      .post(`/api/v1/schedules/${id}/backfill`)
      .set(g.user.auth)
      .send({ start_at: new Date(aligned - 5_000).toISOString(), end_at: new Date(aligned + 125_000).toISOString() });
    expect(back.status).toBe(202);
    const runs = await poll(
      () => runsOf(id),
      (r) => r.length === 2 && r.some((x) => x.status === 'running') && r.some((x) => x.status === 'failed'),
      'one running, one refused',
    );
    expect(runs.find((r) => r.status === 'failed')!.error).toMatchObject({ reason: 'concurrent_runs_exceeded' });
    for (const r of runs.filter((x) => x.status === 'running')) {
      await g.api.http.post(`/api/v1/workflows/runs/${r.run_id}/cancel`).set(g.user.auth);
    }
  }, 60_000);
});
