/**
 * GET /api/v1/runs through the real API and database: every filter, several statuses at once, paging across pages,
 * the status a run shows (derived from its steps) as the filter's meaning, owner isolation, child runs left out, and
 * bad input answered with the envelope. Runs are written straight into the database (a search reads only the
 * projection), so many states and ages can be set up exactly.
 */
import { insertRun, newRunDoc, runsCollection, type RunDoc } from '../../db/runs';
import type { RunStatus, StepStatus } from '../../domain/run';
import { actionStep, testSnapshot } from '../helpers/snapshots';
import { deriveRunStatus } from '../../domain/run-state';
import { startTestApi, testConfig, uniqueId, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';

interface Item {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  status: RunStatus;
  created_at: string;
  usage: { llm_calls: number; input_tokens: number; output_tokens: number };
  duration_ms: number | null;
}

const STEP_STATES: StepStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'skipped'];

describe('run search', () => {
  let api: TestApi;
  let user: TestUser;
  let other: TestUser;
  const base = Date.UTC(2026, 0, 1);

  /** A run of `user` with the given stored status and step states, created `minute` minutes after `base`. */
  const put = async (
    owner: TestUser,
    minute: number,
    opts: {
      stored?: RunStatus;
      steps?: StepStatus[];
      workflow?: { id: string; name: string };
      parent?: string;
      usage?: number;
    } = {},
  ): Promise<RunDoc> => {
    const steps = opts.steps ?? ['completed'];
    const runId = opts.parent ? `${opts.parent}.child` : uniqueId('run_');
    const workflow = opts.workflow ?? { id: 'wf_default000', name: 'Default flow' };
    const created = new Date(base + minute * 60_000);
    const doc = newRunDoc({
      snapshot: testSnapshot(
        runId,
        steps.map((_, i) => actionStep(`s${i}`)),
        { owner_id: owner.id, workflow_id: workflow.id, workflow_name: workflow.name },
      ),
      namespace: 'default',
      taskQueue: 'q',
      now: created,
    });
    doc.status = opts.stored ?? 'completed';
    doc.steps.forEach((s, i) => {
      s.status = steps[i]!;
      s.usage = { llm_calls: opts.usage ?? 0, input_tokens: 10 * (opts.usage ?? 0), output_tokens: opts.usage ?? 0 };
    });
    if (opts.parent) doc.parent_run_id = opts.parent;
    if (doc.status !== 'queued') doc.started_at = new Date(created.getTime() + 1000);
    if (['completed', 'failed', 'cancelled', 'timed_out'].includes(doc.status)) {
      doc.completed_at = new Date(created.getTime() + 61_000);
    }
    await insertRun(api.database.db, doc);
    return doc;
  };

  const search = async (query: string, who: TestUser = user) => {
    const res = await api.http.get(`/api/v1/runs${query}`).set(who.auth);
    if (res.status !== 200) throw new Error(`search ${query}: ${res.status} ${JSON.stringify(res.body)}`);
    return { items: (res.body as { data: Item[] }).data, link: res.headers.link };
  };
  /** Every page, following the Link header. */
  const searchAll = async (query: string) => {
    const items: Item[] = [];
    let next: string | undefined = `/api/v1/runs${query}`;
    while (next) {
      const res: { status: number; body: unknown; headers: Record<string, string> } = await api.http
        .get(next)
        .set(user.auth);
      expect(res.status).toBe(200);
      items.push(...(res.body as { data: Item[] }).data);
      const link: string | undefined = res.headers.link;
      const url = link ? new URL(link.slice(1, link.indexOf('>'))) : undefined;
      next = url ? url.pathname + url.search : undefined;
    }
    return items;
  };

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    user = await createTestUser(api.database.db);
    other = await createTestUser(api.database.db);
  });
  afterAll(() => api?.close());

  it('finds exactly the runs whose shown status is asked for, for every combination of step states', async () => {
    const owner = await createTestUser(api.database.db);
    const expected = new Map<string, RunStatus>();
    let minute = 0;
    // Every stored status × every pair of step states (and one-step runs): what the status endpoint would show.
    // `waiting` stored: runs recorded before it became derived.
    for (const stored of [
      'queued',
      'running',
      'waiting',
      'completed',
      'failed',
      'cancelled',
      'timed_out',
    ] as RunStatus[]) {
      for (const a of STEP_STATES) {
        for (const b of [...STEP_STATES, null]) {
          const steps = b === null ? [a] : [a, b];
          const doc = await put(owner, minute++, { stored, steps });
          expected.set(
            doc._id,
            deriveRunStatus(
              stored,
              steps.map((status, i) => ({ id: `s${i}`, status })),
            ),
          );
        }
      }
    }
    for (const status of ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'timed_out']) {
      const res = await api.http.get(`/api/v1/runs?status=${status}&limit=200`).set(owner.auth);
      expect(res.status).toBe(200);
      const found = (res.body as { data: Item[] }).data;
      const want = [...expected].filter(([, s]) => s === status).map(([id]) => id);
      expect(found.map((i) => i.run_id).sort()).toEqual(want.sort());
      expect(found.every((i) => i.status === status)).toBe(true);
    }
  });

  it('filters by several statuses, workflow, time and name; newest first; pages across pages', async () => {
    const digest = { id: 'wf_digest00001', name: 'Daily Digest' };
    const billing = { id: 'wf_billing0001', name: 'Billing run (v2.*)' };
    const a = await put(user, 1, { workflow: digest, stored: 'failed', steps: ['failed'], usage: 2 });
    const b = await put(user, 2, { workflow: billing, stored: 'completed' });
    const c = await put(user, 3, { workflow: digest, stored: 'running', steps: ['waiting'] });
    const d = await put(user, 4, { workflow: digest, stored: 'timed_out', steps: ['failed'] });
    const e = await put(user, 5, { workflow: billing, stored: 'running', steps: ['running'] });
    const child = await put(user, 6, { workflow: digest, stored: 'failed', steps: ['failed'], parent: e._id });
    await put(other, 7, { workflow: digest, stored: 'failed', steps: ['failed'] });

    const ids = (items: Item[]) => items.map((i) => i.run_id);
    // All of mine, newest first, children left out.
    expect(ids((await search('')).items)).toEqual([e, d, c, b, a].map((r) => r._id));
    expect(ids((await search('')).items)).not.toContain(child._id);
    // Several statuses, comma-separated or repeated.
    expect(ids((await search('?status=failed,timed_out')).items)).toEqual([d._id, a._id]);
    expect(ids((await search('?status=waiting&status=running')).items)).toEqual([e._id, c._id]);
    // Workflow, name text (case-insensitive substring, regex characters literal), time window.
    expect(ids((await search(`?workflow_id=${digest.id}`)).items)).toEqual([d, c, a].map((r) => r._id));
    expect(ids((await search('?q=digest')).items)).toEqual([d, c, a].map((r) => r._id));
    expect(ids((await search(`?q=${encodeURIComponent('(v2.*)')}`)).items)).toEqual([e._id, b._id]);
    expect(ids((await search(`?q=${encodeURIComponent('v2.+')}`)).items)).toEqual([]);
    const at = (m: number) => encodeURIComponent(new Date(base + m * 60_000).toISOString());
    expect(ids((await search(`?created_after=${at(2)}&created_before=${at(5)}`)).items)).toEqual(
      [d, c, b].map((r) => r._id),
    );
    expect(
      ids((await search(`?status=failed,timed_out&workflow_id=${digest.id}&created_after=${at(2)}`)).items),
    ).toEqual([d._id]);
    // The item: the run list's fields plus the name, usage and duration.
    const [item] = (await search('?status=failed')).items;
    expect(item).toMatchObject({
      run_id: a._id,
      workflow_id: digest.id,
      workflow_name: 'Daily Digest',
      status: 'failed',
      usage: { llm_calls: 2, input_tokens: 20, output_tokens: 2 },
      duration_ms: 60_000,
    });
    expect((await search('?status=running')).items[0]).toMatchObject({ duration_ms: null });
    // Paging: two at a time, every run once, in order.
    const first = await search('?limit=2');
    expect(first.items).toHaveLength(2);
    expect(first.link).toMatch(/limit=2/);
    expect(ids(await searchAll('?limit=2'))).toEqual([e, d, c, b, a].map((r) => r._id));
    expect(ids(await searchAll(`?limit=1&workflow_id=${digest.id}`))).toEqual([d, c, a].map((r) => r._id));
    // The other user sees only their own.
    expect((await search('', other)).items.map((i) => i.workflow_name)).toEqual(['Daily Digest']);
  });

  it('refuses bad input with the envelope, and a missing key with 401', async () => {
    const bad = async (query: string, message: RegExp) => {
      const res = await api.http.get(`/api/v1/runs${query}`).set(user.auth);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ data: null, error: expect.stringMatching(message) });
    };
    await bad('?status=paused', /status/);
    await bad('?status=', /status/);
    await bad('?created_after=yesterday', /created_after/);
    await bad(`?q=${'x'.repeat(101)}`, /q/);
    await bad('?order=asc', /order/);
    await bad('?limit=500', /limit/);
    await bad('?cursor=nope', /cursor/);
    expect((await api.http.get('/api/v1/runs')).status).toBe(401);
    // A run document nobody can see is not counted: the raw collection holds them all.
    expect(await runsCollection(api.database.db).countDocuments({ owner_id: user.id })).toBeGreaterThan(0);
  });
});
