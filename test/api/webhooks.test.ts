/**
 * Completion webhooks on the real stack (API, worker, Temporal, the database, an HTTP sink as the receiver): signed
 * deliveries retried by Temporal with one delivery id, the SSRF guard at start (literal addresses) and at delivery
 * (names that resolve inward), cancelled runs delivering too, the workflow-config URL and the start body's, and the
 * owner-scoped secret routes. Retry intervals are made small through the configuration.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Worker } from '@temporalio/worker';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { openApiChecker } from '../helpers/openapi';
import { testDataConverter, uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, waitForStatus, type StatusBody } from '../helpers/workflows';
import { runsCollection } from '../../db/runs';
import { webhookDeliveriesCollection } from '../../db/webhook-deliveries';

interface Delivery {
  delivery_id: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: {
    attempt: number;
    at: string;
    status_code: number | null;
    error: { reason: string; message: string } | null;
  }[];
}
type WithWebhooks = StatusBody & { webhooks: Delivery[] };

/** An independent Standard Webhooks verification, as a receiver would write it (docs/webhooks.md). */
function verify(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers['webhook-id']);
  const ts = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64'));
  return String(headers['webhook-signature'])
    .split(' ')
    .map((s) => Buffer.from(s.replace(/^v1,/, '')))
    .some((got) => got.length === expected.length && timingSafeEqual(got, expected));
}

describe('completion webhooks', () => {
  let g: GraphStack;
  const openapi = openApiChecker();

  beforeAll(async () => {
    g = await startGraphStack({ WEBHOOK_RETRY_INITIAL_SECONDS: '0.05', WEBHOOK_MAX_ATTEMPTS: '4' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  const transformWorkflow = (config: Record<string, unknown> = {}) =>
    createWorkflow(g.api, g.user, {
      name: uniqueId('hooked'),
      steps: [{ id: 'calc', template_id: g.tpl.transform._id, config: { expression: '1 + 1' } }],
      config,
    } as never);

  const start = async (workflowId: string, body: Record<string, unknown>, user: TestUser = g.user) =>
    g.api.http.post(`/api/v1/workflows/${workflowId}/run`).set(user.auth).send(body);

  const startOk = async (workflowId: string, body: Record<string, unknown>) => {
    const res = await start(workflowId, body);
    expect(res.status).toBe(202);
    return (res.body as { data: { run_id: string } }).data.run_id;
  };

  const secretOf = async (user: TestUser) => {
    const res = await g.api.http.get('/api/v1/webhooks/secret').set(user.auth);
    openapi.check(res);
    expect(res.status).toBe(200);
    return (res.body as { data: { secret: string } }).data.secret;
  };

  /** The status once its (only) delivery has left `pending`. */
  const settled = (runId: string) =>
    waitForStatus(
      g.api,
      g.user,
      runId,
      (s) => isTerminal(s) && (s as WithWebhooks).webhooks.some((w) => w.status !== 'pending'),
    ) as Promise<WithWebhooks>;

  it('retries a failing receiver with one delivery id, signed with the user secret, and shows every attempt', async () => {
    const path = `/${uniqueId('hook')}`;
    g.sink.route(path, [{ status: 500 }, { status: 500 }, { status: 200 }]);
    const runId = await startOk(await transformWorkflow(), { callback_url: g.sink.url(path) });

    const requests = await g.sink.waitForRequests(3, path, 30_000);
    const secret = await secretOf(g.user);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set([`webhook-${runId}`]));
    for (const r of requests) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toBe('application/json');
      expect(verify(secret, r.headers, r.text)).toBe(true);
      // The signature covers the timestamp: another timestamp does not verify.
      expect(verify(secret, { ...r.headers, 'webhook-timestamp': '1' }, r.text)).toBe(false);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(600);
    }
    // The same bytes on every attempt.
    expect(new Set(requests.map((r) => r.text)).size).toBe(1);
    const body = JSON.parse(requests[0]!.text) as { type: string; timestamp: string; data: WithWebhooks };
    expect(body.type).toBe('run.completed');
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    expect(body.data.run_id).toBe(runId);
    expect(body.data.status).toBe('completed');
    expect(body.data.outputs).toEqual({ calc: 2 });

    const status = await settled(runId);
    const res = await g.api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(g.user.auth);
    openapi.check(res);
    expect(status.webhooks).toHaveLength(1);
    const [delivery] = status.webhooks;
    expect(delivery).toMatchObject({ delivery_id: `webhook-${runId}`, url: g.sink.url(path), status: 'delivered' });
    expect(delivery!.attempts.map((a) => [a.attempt, a.status_code, a.error?.reason ?? null])).toEqual([
      [1, 500, 'http_status'],
      [2, 500, 'http_status'],
      [3, 200, null],
    ]);
    // Nothing more is sent once delivered.
    expect(g.sink.requestsTo(path)).toHaveLength(3);
  });

  it('refuses a literal non-public or credentialled callback URL at start with a 400', async () => {
    const wf = await transformWorkflow();
    // Loopback only: were the check to regress, the run's delivery would go to these. Every other range is refused by
    // the same function (test/api/commands/callback-url.test.ts).
    for (const url of ['http://127.0.0.1:9/hook', 'http://127.31.0.2:9/x', 'http://[::1]:9/hook']) {
      const res = await start(wf, { callback_url: url });
      openapi.check(res);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^callback_url: .*non-public address/);
    }
    for (const url of [
      'ftp://example.com/x',
      'https://user:pw@example.com/x',
      'not a url',
      `https://e.com/${'a'.repeat(2100)}`,
      // Hosts the URL pattern does not take: IPv4 written as one hex number, no host at all.
      'http://0x7f000001/hook',
      'http:///hook',
    ]) {
      const res = await start(wf, { callback_url: url });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/callback_url/);
    }
    // In a workflow's config too, checked when it is saved.
    const created = await g.api.http
      .post('/api/v1/workflows')
      .set(g.user.auth)
      .send({
        name: uniqueId('bad-hook'),
        steps: [{ id: 'calc', template_id: g.tpl.transform._id, config: { expression: '1' } }],
        config: { callback_url: 'http://127.0.0.1/x' },
      });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(/^config\.callback_url: .*loopback/);
  });

  it('fails a delivery whose host name resolves to loopback, recording the SSRF reason', async () => {
    // `localhost` is not in HTTP_ALLOWED_HOSTS (only 127.0.0.1:<port> is): the guard refuses its resolved address.
    const path = `/${uniqueId('inward')}`;
    const runId = await startOk(await transformWorkflow(), { callback_url: `http://localhost:${g.sink.port}${path}` });
    const status = await settled(runId);
    const [delivery] = status.webhooks;
    expect(delivery!.status).toBe('failed');
    // A refusal is final: no retry can change it.
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]).toMatchObject({ status_code: null, error: { reason: 'url_refused' } });
    expect(delivery!.attempts[0]!.error!.message).toMatch(/non-public address \(loopback\)/);
    expect(g.sink.requestsTo(path)).toHaveLength(0);
  });

  it('delivers for a cancelled run, to the URL of the workflow config', async () => {
    const path = `/${uniqueId('cancelled')}`;
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('wait'),
      steps: [{ id: 'ask', template_id: g.tpl.approval._id, config: { message: 'go?' } }],
      config: { callback_url: g.sink.url(path) },
    });
    const runId = await startOk(wf, {});
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    expect((await g.api.http.post(`/api/v1/workflows/runs/${runId}/cancel`).set(g.user.auth).send({})).status).toBe(
      202,
    );
    const [request] = await g.sink.waitForRequests(1, path, 30_000);
    const body = JSON.parse(request!.text) as { type: string; data: WithWebhooks };
    expect(body.type).toBe('run.cancelled');
    expect(body.data.status).toBe('cancelled');
    expect(verify(await secretOf(g.user), request!.headers, request!.text)).toBe(true);
    expect((await settled(runId)).webhooks[0]!.status).toBe('delivered');
  });

  it('delivers for a run that timed out (its own deadline timer ends it), once', async () => {
    const path = `/${uniqueId('timed-out')}`;
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('slow'),
      steps: [{ id: 'ask', template_id: g.tpl.approval._id, config: { message: 'go?' } }],
      config: { callback_url: g.sink.url(path), timeout_seconds: 2 },
    });
    const runId = await startOk(wf, {});
    const ended = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(ended.status).toBe('timed_out');
    const [request] = await g.sink.waitForRequests(1, path, 30_000);
    expect((JSON.parse(request!.text) as { type: string }).type).toBe('run.timed_out');
    expect(verify(await secretOf(g.user), request!.headers, request!.text)).toBe(true);
    expect((await settled(runId)).webhooks.map((w) => w.status)).toEqual(['delivered']);
    expect(g.sink.requestsTo(path)).toHaveLength(1);
  });

  it("uses the start body's URL over the workflow config's", async () => {
    const fromConfig = `/${uniqueId('config')}`;
    const fromStart = `/${uniqueId('start')}`;
    const runId = await startOk(await transformWorkflow({ callback_url: g.sink.url(fromConfig) }), {
      callback_url: g.sink.url(fromStart),
    });
    await settled(runId);
    expect(g.sink.requestsTo(fromStart)).toHaveLength(1);
    expect(g.sink.requestsTo(fromConfig)).toHaveLength(0);
  });

  it('sends nothing for a run without a callback URL, and nothing for sub-workflow runs', async () => {
    const path = `/${uniqueId('parent')}`;
    const child = await transformWorkflow();
    const parent = await createWorkflow(g.api, g.user, {
      name: uniqueId('parent'),
      steps: [{ id: 'sub', workflow_id: child }],
    });
    const plain = await startOk(child, {});
    const nested = await startOk(parent, { callback_url: g.sink.url(path) });
    expect((await waitForStatus(g.api, g.user, plain, isTerminal)) as WithWebhooks).toMatchObject({ webhooks: [] });
    const status = await settled(nested);
    expect(status.webhooks.map((w) => w.status)).toEqual(['delivered']);
    const stored = await webhookDeliveriesCollection(g.api.database.db).find({}).toArray();
    expect(stored.map((d) => d.run_id)).not.toContain(plain);
    expect(stored.map((d) => d.run_id).filter((id) => id.startsWith(nested))).toEqual([nested]);

    // Each run records whether it delivers, so a status read of one that does not looks up nothing.
    const runs = runsCollection(g.api.database.db);
    expect((await runs.findOne({ _id: plain }))?.webhook).toBe(false);
    expect((await runs.findOne({ _id: nested }))?.webhook).toBe(true);
    expect((await runs.find({ parent_run_id: nested }).toArray()).map((r) => r.webhook)).toEqual([false]);
    // A run stored before that was recorded has its deliveries looked up.
    await runs.updateOne({ _id: nested }, { $unset: { webhook: '' } });
    const older = (await waitForStatus(g.api, g.user, nested, isTerminal)) as WithWebhooks;
    expect(older.webhooks.map((w) => w.status)).toEqual(['delivered']);
  });

  it('keeps each user to their own secret; rotation replaces only the caller’s', async () => {
    const other = await createTestUser(g.api.database.db);
    const mine = await secretOf(g.user);
    expect(mine).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await secretOf(g.user)).toBe(mine);
    const theirs = await secretOf(other);
    expect(theirs).not.toBe(mine);

    const rotated = await g.api.http.post('/api/v1/webhooks/secret/rotate').set(other.auth).send({});
    openapi.check(rotated);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(theirs);
    expect(await secretOf(other)).toBe(rotated.body.data.secret);
    expect(await secretOf(g.user)).toBe(mine);

    for (const res of [
      await g.api.http.get('/api/v1/webhooks/secret'),
      await g.api.http.post('/api/v1/webhooks/secret/rotate').send({}),
      await g.api.http.get('/api/v1/webhooks/secret').set({ Authorization: 'Bearer sw_nope' }),
    ]) {
      openapi.check(res);
      expect(res.status).toBe(401);
    }
  });

  it('replays the histories of a run that started a delivery, and of the delivery', async () => {
    const path = `/${uniqueId('replay')}`;
    g.sink.route(path, [{ status: 503 }, { status: 204 }]);
    const runId = await startOk(await transformWorkflow(), { callback_url: g.sink.url(path) });
    await settled(runId);
    const replay = {
      workflowBundle: { codePath: process.env.STEPWISE_TEST_BUNDLE! },
      dataConverter: testDataConverter(),
    };
    for (const id of [runId, `webhook-${runId}`]) {
      const handle = g.api.temporal.workflow.getHandle(id);
      await handle.result();
      await expect(Worker.runReplayHistory(replay, await handle.fetchHistory(), id)).resolves.toBeUndefined();
    }
  });

  it("hides a run's deliveries from other users (404 like any other id)", async () => {
    const other = await createTestUser(g.api.database.db);
    const path = `/${uniqueId('private')}`;
    const runId = await startOk(await transformWorkflow(), { callback_url: g.sink.url(path) });
    await settled(runId);
    const res = await g.api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(other.auth);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toContain(path);
  });
});
