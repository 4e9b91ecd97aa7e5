/**
 * The approvals inbox across two users, on real runs: what waits is listed with its message, instructions and
 * deadline; a decision, a cancelled run and a timeout each take it off the list; nobody sees or decides another
 * user's approvals.
 */
import type { JsonObject } from '../../domain/json';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

interface InboxItem {
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  step_id: string;
  message: string;
  instructions: string | null;
  waiting_since: string;
  deadline: string | null;
  approve_url: string;
}

describe('approvals inbox', () => {
  let g: GraphStack;
  let other: TestUser;

  beforeAll(async () => {
    g = await startGraphStack();
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(() => g?.stop());

  const inbox = async (user: TestUser, query = '') => {
    const res = await g.api.http.get(`/api/v1/approvals${query}`).set(user.auth);
    expect(res.status).toBe(200);
    return { items: (res.body as { data: InboxItem[] }).data, link: res.headers.link };
  };
  const decide = (user: TestUser, runId: string, stepId: string, approved: boolean) =>
    g.api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: stepId, approved, comment: approved ? 'fine' : 'no' });

  const approvalWorkflow = async (user: TestUser, name: string, steps: JsonObject[]) =>
    createWorkflow(g.api, user, { name, steps });

  it("lists each user's waiting approvals and removes them as they are decided, time out or end with the run", async () => {
    const otherTpl = await actionTemplates(g.api.database.db, other.id);
    const single = await approvalWorkflow(g.user, uniqueId('single'), [
      {
        id: 'sign_off',
        template_id: g.tpl.approval._id,
        config: { message: 'Ship it?', instructions: 'Check the numbers first.', timeout_seconds: 3600 },
      },
    ]);
    const perItem = await approvalWorkflow(g.user, uniqueId('per-item'), [
      {
        id: 'review',
        template_id: g.tpl.approval._id,
        map: { over: '{{input.items}}' },
        config: { message: 'Review {{map.item}}' },
      },
    ]);
    const short = await approvalWorkflow(g.user, uniqueId('short'), [
      { id: 'quick', template_id: g.tpl.approval._id, config: { message: 'Quick?', timeout_seconds: 2 } },
    ]);
    const theirs = await approvalWorkflow(other, uniqueId('theirs'), [
      { id: 'gate', template_id: otherTpl.approval._id, config: { message: 'Theirs?' } },
    ]);

    const a = await startRun(g.api, g.user, single);
    const b = await startRun(g.api, g.user, perItem, { items: ['x', 'y'] });
    const o = await startRun(g.api, other, theirs);
    for (const [user, run] of [
      [g.user, a],
      [g.user, b],
      [other, o],
    ] as const) {
      await waitForStatus(g.api, user, run, (s) => s.status === 'waiting');
    }

    const mine = await inbox(g.user);
    expect(mine.items.map((i) => `${i.run_id} ${i.step_id} ${i.message}`).sort()).toEqual(
      [`${a} sign_off Ship it?`, `${b} review[0] Review x`, `${b} review[1] Review y`].sort(),
    );
    const signOff = mine.items.find((i) => i.step_id === 'sign_off')!;
    expect(signOff).toMatchObject({ workflow_id: single, instructions: 'Check the numbers first.' });
    expect(Date.parse(signOff.deadline!) - Date.parse(signOff.waiting_since)).toBe(3600_000);
    expect(signOff.approve_url).toMatch(new RegExp(`/api/v1/workflows/runs/${a}/approve$`));
    expect(mine.items.find((i) => i.step_id === 'review[0]')!.deadline).toBeNull();
    // Oldest first, paged.
    const sorted = [...mine.items].sort((x, y) => x.waiting_since.localeCompare(y.waiting_since));
    expect(mine.items.map((i) => i.waiting_since)).toEqual(sorted.map((i) => i.waiting_since));
    const page1 = await inbox(g.user, '?limit=2');
    expect(page1.items).toHaveLength(2);
    const next = new URL(page1.link!.slice(1, page1.link!.indexOf('>')));
    const page2 = await inbox(g.user, next.search);
    expect([...page1.items, ...page2.items].map((i) => i.step_id)).toEqual(mine.items.map((i) => i.step_id));

    // The other user sees only their own, and cannot decide mine.
    expect((await inbox(other)).items.map((i) => i.run_id)).toEqual([o]);
    expect((await decide(other, a, 'sign_off', true)).status).toBe(404);

    // A decision takes it off the list at once.
    expect((await decide(g.user, b, 'review[1]', true)).status).toBe(200);
    expect((await inbox(g.user)).items.map((i) => i.step_id).sort()).toEqual(['review[0]', 'sign_off']);
    expect((await decide(g.user, a, 'sign_off', true)).status).toBe(200);
    expect((await waitForStatus(g.api, g.user, a, isTerminal)).status).toBe('completed');
    // A cancelled run's approvals go with it.
    await g.api.http.post(`/api/v1/workflows/runs/${b}/cancel`).set(g.user.auth).expect(202);
    await waitForStatus(g.api, g.user, b, isTerminal);
    expect((await inbox(g.user)).items).toEqual([]);

    // A timed-out approval leaves the list.
    const q = await startRun(g.api, g.user, short);
    await waitForStatus(g.api, g.user, q, (s) => s.status === 'waiting');
    expect((await inbox(g.user)).items.map((i) => i.step_id)).toEqual(['quick']);
    expect((await waitForStatus(g.api, g.user, q, isTerminal)).status).toBe('failed');
    expect((await inbox(g.user)).items).toEqual([]);

    expect((await decide(other, o, 'gate', true)).status).toBe(200);
    expect((await inbox(other)).items).toEqual([]);
  }, 90_000);

  it('answers 401 without a key and 400 for unknown query fields', async () => {
    expect((await g.api.http.get('/api/v1/approvals')).status).toBe(401);
    expect((await g.api.http.get('/api/v1/approvals?status=waiting').set(g.user.auth)).status).toBe(400);
    expect((await g.api.http.get('/api/v1/approvals?limit=0').set(g.user.auth)).status).toBe(400);
  });
});
