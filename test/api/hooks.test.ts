/**
 * Inbound webhooks on the real stack: a signed delivery starts a run with its body as input; wrong signatures, stale
 * timestamps and replayed message ids are refused or answered with the first run; unsigned hooks, rotation, disabling,
 * a deleted workflow, input checks, a burst of 200 deliveries (202 or 429, never a 5xx), and owner isolation on every
 * management route.
 */
import { signWebhook } from '../../shared/webhook-signature';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { openApiChecker } from '../helpers/openapi';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, waitForStatus } from '../helpers/workflows';

interface HookBody {
  id: string;
  url: string;
  signed: boolean;
  enabled: boolean;
  secret?: string;
}

describe('inbound webhooks', () => {
  let g: GraphStack;
  let other: TestUser;
  const oas = openApiChecker();

  beforeAll(async () => {
    g = await startGraphStack({ HOOK_RATE_LIMIT_PER_MINUTE: '20', USER_MAX_CONCURRENT_RUNS: '500' });
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(() => g?.stop());

  /** A workflow that echoes its input's `ticket` (and requires it). */
  const echoWorkflow = () =>
    createWorkflow(g.api, g.user, {
      name: uniqueId('hooked'),
      config: {
        input_schema: { type: 'object', required: ['ticket'], properties: { ticket: { type: 'string' } } },
      },
      steps: [{ id: 'echo', template_id: g.tpl.transform._id, config: { expression: 'ticket', data: '{{input}}' } }],
    });
  const create = async (workflowId: string, body: Record<string, unknown> = {}) => {
    const res = await g.api.http.post(`/api/v1/workflows/${workflowId}/hooks`).set(g.user.auth).send(body);
    oas.check(res);
    expect(res.status).toBe(201);
    return (res.body as { data: HookBody }).data;
  };
  const deliver = (hook: Pick<HookBody, 'id'>, body: unknown, headers: Record<string, string> = {}) =>
    g.api.http
      .post(`/api/v1/hooks/${hook.id}`)
      .set(headers)
      .send(body as object);
  const signed = (secret: string, body: unknown, id = uniqueId('msg'), at = Math.floor(Date.now() / 1000)) => ({
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': signWebhook(secret, id, at, JSON.stringify(body)),
  });

  it('starts a run from a signed delivery; refuses bad signatures, stale timestamps; a replay gets the first run', async () => {
    const wf = await echoWorkflow();
    const hook = await create(wf, { name: 'tickets' });
    expect(hook).toMatchObject({ signed: true, enabled: true, secret: expect.stringMatching(/^whsec_/) });
    expect(hook.url).toMatch(new RegExp(`/api/v1/hooks/${hook.id}$`));
    // The secret is shown on creation only.
    const listed = await g.api.http.get(`/api/v1/workflows/${wf}/hooks`).set(g.user.auth);
    oas.check(listed);
    expect((listed.body as { data: HookBody[] }).data.map((h) => [h.id, h.secret])).toEqual([[hook.id, undefined]]);

    const body = { ticket: 'T-1' };
    const headers = signed(hook.secret!, body);
    const res = await deliver(hook, body, headers);
    oas.check(res);
    expect(res.status).toBe(202);
    const runId = (res.body as { data: { run_id: string } }).data.run_id;
    const done = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(done).toMatchObject({ status: 'completed', input: body, outputs: { echo: 'T-1' } });

    // The same message again (a sender's retry): the same run, no second one.
    const again = await deliver(hook, body, headers);
    expect(again.status).toBe(202);
    expect((again.body as { data: { run_id: string } }).data.run_id).toBe(runId);
    // `Idempotency-Key` is not signed: added or changed, the same signed message is still the same delivery.
    for (const key of ['replay-1', 'replay-2']) {
      const replay = await deliver(hook, body, { ...headers, 'Idempotency-Key': key });
      expect(replay.status).toBe(202);
      expect((replay.body as { data: { run_id: string } }).data.run_id).toBe(runId);
    }
    // ... and removed: a message first sent with a key is the same delivery without it.
    const keyed = signed(hook.secret!, body);
    const withKey = await deliver(hook, body, { ...keyed, 'Idempotency-Key': 'replay-3' });
    expect(withKey.status).toBe(202);
    const secondRun = (withKey.body as { data: { run_id: string } }).data.run_id;
    expect(secondRun).not.toBe(runId);
    const withoutKey = await deliver(hook, body, keyed);
    expect((withoutKey.body as { data: { run_id: string } }).data.run_id).toBe(secondRun);

    const refused = async (headers: Record<string, string>, sent: unknown = body) => {
      const r = await deliver(hook, sent, headers);
      oas.check(r);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ data: null, error: expect.stringContaining('signature refused') });
    };
    await refused({});
    await refused({ ...signed(hook.secret!, body), 'webhook-signature': 'v1,AAAA' });
    await refused(signed(hook.secret!, body), { ticket: 'T-2' }); // signed for another body
    await refused(signed(hook.secret!, body, uniqueId('msg'), Math.floor(Date.now() / 1000) - 3600)); // stale
    await refused(signed('whsec_' + Buffer.alloc(32, 7).toString('base64'), body)); // another secret
    const runs = await g.api.http.get(`/api/v1/runs?workflow_id=${wf}`).set(g.user.auth);
    expect((runs.body as { data: unknown[] }).data).toHaveLength(2);

    // Rotation: the old secret stops working, the new one works.
    const rotated = await g.api.http.post(`/api/v1/workflows/${wf}/hooks/${hook.id}/rotate-secret`).set(g.user.auth);
    oas.check(rotated);
    const secret = (rotated.body as { data: HookBody }).data.secret!;
    expect(secret).not.toBe(hook.secret);
    await refused(signed(hook.secret!, { ticket: 'T-3' }), { ticket: 'T-3' });
    expect((await deliver(hook, { ticket: 'T-3' }, signed(secret, { ticket: 'T-3' }))).status).toBe(202);
  }, 60_000);

  it('unsigned hooks, Idempotency-Key, input checks, disabling, and a deleted workflow', async () => {
    const wf = await echoWorkflow();
    const hook = await create(wf, { signed: false });
    expect(hook.secret).toBeUndefined();
    const first = await deliver(hook, { ticket: 'A' }, { 'Idempotency-Key': 'order-1' });
    expect(first.status).toBe(202);
    const repeat = await deliver(hook, { ticket: 'A' }, { 'Idempotency-Key': 'order-1' });
    expect(repeat.body.data.run_id).toBe(first.body.data.run_id);
    // An unsigned hook has nothing signed to go by: `webhook-id` alone does not make deliveries duplicates.
    const byId = await deliver(hook, { ticket: 'A' }, { 'webhook-id': 'msg-1' });
    const byIdAgain = await deliver(hook, { ticket: 'A' }, { 'webhook-id': 'msg-1' });
    expect(byIdAgain.body.data.run_id).not.toBe(byId.body.data.run_id);
    // The workflow's input_schema applies; the body must be an object.
    expect((await deliver(hook, { nope: 1 })).status).toBe(400);
    expect((await deliver(hook, [1, 2])).status).toBe(400);
    const text = await g.api.http.post(`/api/v1/hooks/${hook.id}`).set('Content-Type', 'text/plain').send('hi');
    expect(text.status).toBe(415);

    // Unknown, malformed and disabled ids: the same 404.
    for (const id of ['hook_' + 'x'.repeat(32), 'nope', hook.id.slice(0, -1)]) {
      const r = await deliver({ id }, { ticket: 'B' });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ data: null, error: 'hook not found' });
    }
    const off = await g.api.http
      .patch(`/api/v1/workflows/${wf}/hooks/${hook.id}`)
      .set(g.user.auth)
      .send({ enabled: false });
    oas.check(off);
    expect(off.body.data.enabled).toBe(false);
    expect((await deliver(hook, { ticket: 'B' })).body).toEqual({ data: null, error: 'hook not found' });
    await g.api.http.patch(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(g.user.auth).send({ enabled: true });
    expect((await deliver(hook, { ticket: 'B' })).status).toBe(202);
    // A change must change something: no body or an empty one is a 400 (Schemathesis found it answered 200).
    expect((await g.api.http.patch(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(g.user.auth)).status).toBe(400);
    const empty = await g.api.http.patch(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(g.user.auth).send({});
    expect(empty.status).toBe(400);

    // Deleting the workflow disables its hooks.
    await g.api.http.delete(`/api/v1/workflows/${wf}`).set(g.user.auth).expect(200);
    expect((await deliver(hook, { ticket: 'C' })).status).toBe(404);
  }, 60_000);

  it("a hook made signed by rotation: an unsigned delivery's Idempotency-Key does not stand for a signed webhook-id", async () => {
    const wf = await echoWorkflow();
    const hook = await create(wf, { signed: false });
    // Anyone who knew the unsigned URL could have sent this, picking the key a signed sender will use later.
    const planted = await deliver(hook, { ticket: 'planted' }, { 'Idempotency-Key': 'msg-7' });
    expect(planted.status).toBe(202);
    const rotated = await g.api.http.post(`/api/v1/workflows/${wf}/hooks/${hook.id}/rotate-secret`).set(g.user.auth);
    const secret = (rotated.body as { data: HookBody }).data.secret!;
    const body = { ticket: 'real' };
    const res = await deliver(hook, body, signed(secret, body, 'msg-7'));
    oas.check(res);
    expect(res.status).toBe(202);
    const runId = (res.body as { data: { run_id: string } }).data.run_id;
    expect(runId).not.toBe(planted.body.data.run_id);
    const done = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(done).toMatchObject({ status: 'completed', outputs: { echo: 'real' } });
  }, 60_000);

  it('answers a burst of 200 deliveries with 202 or 429, never a 5xx', async () => {
    const wf = await echoWorkflow();
    const hook = await create(wf, { signed: false });
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => deliver(hook, { ticket: `burst-${i}` }).then((r) => r.status)),
    );
    const counts = answers.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    expect(Object.keys(counts).sort()).toEqual(['202', '429']);
    expect(counts[202]).toBe(20); // HOOK_RATE_LIMIT_PER_MINUTE
  }, 120_000);

  it("keeps each user's hooks to themselves (404 on every management route)", async () => {
    const wf = await echoWorkflow();
    const hook = await create(wf);
    const as = (user: TestUser) => ({
      list: () => g.api.http.get(`/api/v1/workflows/${wf}/hooks`).set(user.auth),
      create: () => g.api.http.post(`/api/v1/workflows/${wf}/hooks`).set(user.auth).send({}),
      get: () => g.api.http.get(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(user.auth),
      patch: () => g.api.http.patch(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(user.auth).send({ enabled: false }),
      rotate: () => g.api.http.post(`/api/v1/workflows/${wf}/hooks/${hook.id}/rotate-secret`).set(user.auth),
      remove: () => g.api.http.delete(`/api/v1/workflows/${wf}/hooks/${hook.id}`).set(user.auth),
    });
    for (const call of Object.values(as(other))) {
      const res = await call();
      oas.check(res);
      expect(res.status).toBe(404);
    }
    expect((await g.api.http.get(`/api/v1/workflows/${wf}/hooks`)).status).toBe(401);
    // Still there and unchanged for its owner; then deleted.
    const mine = await as(g.user).get();
    expect(mine.body.data).toMatchObject({ id: hook.id, enabled: true });
    expect((await as(g.user).remove()).status).toBe(200);
    expect((await as(g.user).get()).status).toBe(404);
  });
});
