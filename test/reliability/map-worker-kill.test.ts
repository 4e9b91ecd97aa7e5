/**
 * A map of 20 e-mails (concurrency 5) across a worker SIGKILL in the middle: while no worker runs, the status still
 * answers with the map's progress; a new worker finishes the map; the SMTP server saw exactly 20 distinct
 * Message-IDs — one per item, each derived from `<run id>:mail[<i>]` — so no item was sent under two identities and
 * none was lost. (A copy sent again after the kill carries its item's Message-ID, so it is recognisable.)
 */
import net from 'node:net';
import nodemailer from 'nodemailer';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { messageIdFor } from '../../temporal/mail/message';

describe('R2: a map across a worker kill -9', () => {
  let smtp: TestSmtp;
  let api: TestApi;
  let user: TestUser;
  const workers: WorkerProcess[] = [];

  const newWorker = async () => {
    const w = spawnWorker(api.config, { SMTP_URL: smtp.url });
    workers.push(w);
    await w.ready;
    return w;
  };

  beforeAll(async () => {
    smtp = await startTestSmtp();
    api = await startTestApi(testConfig({ SMTP_URL: smtp.url }));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await api?.close();
    await smtp?.close();
  });

  it('the SMTP test server outlives clients that reset their connections (as a killed worker does)', async () => {
    for (let i = 0; i < 3; i++) {
      const socket = net.connect(smtp.port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      // Reset inside a transaction (after MAIL FROM), as a worker killed while sending leaves it.
      for (const line of ['EHLO killed.example', 'MAIL FROM:<a@example.test>', 'RCPT TO:<b@example.test>']) {
        socket.write(`${line}\r\n`);
        await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      }
      socket.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    const before = smtp.messages.length;
    const transport = nodemailer.createTransport(smtp.url);
    await transport.sendMail({ from: 'a@example.test', to: 'b@example.test', subject: 'still here', text: 'x' });
    transport.close();
    await smtp.waitForMessages(before + 1);
  });

  it('still 20 distinct Message-IDs, none lost; the status answers while the worker is down', async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    const wf = await createWorkflow(api, user, {
      name: 'map kill -9',
      steps: [
        {
          id: 'mail',
          template_id: tpl.send_email._id,
          // Short attempts: an attempt lost with the killed worker is retried after the heartbeat timeout (≤ 6 s).
          timeout_seconds: 6,
          retry: { max_attempts: 10 },
          map: { over: '{{input.customers}}', concurrency: 5 },
          config: { to: '{{map.item}}', subject: 'Item {{map.index}}', text: 'hello' },
        },
      ],
    });
    const customers = Array.from({ length: 20 }, (_, i) => `k${i}@example.test`);
    const first = await newWorker();
    const baseline = smtp.messages.length;
    const runId = await startRun(api, user, wf, { customers });
    await smtp.waitForMessages(baseline + 8, 60_000);
    first.kill('SIGKILL');
    await first.exited;

    // No worker: the status is read from the projection, mid-map.
    const res = await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth);
    expect(res.status).toBe(200);
    const down = res.body.data;
    expect(down.status).toBe('running');
    const counts = down.steps[0].executions.counts;
    expect(counts.total).toBe(20);
    expect(counts.completed).toBeGreaterThanOrEqual(1);
    expect(counts.completed).toBeLessThan(20);

    await newWorker();
    const end = await waitForStatus(api, user, runId, isTerminal, 120_000);
    expect(end.status).toBe('completed');
    const expected = new Set(customers.map((_, i) => messageIdFor(`${runId}:mail[${i}]`, api.config.SMTP_FROM)));
    const mine = smtp.messages.filter((m) => customers.includes(m.envelope.to[0]!));
    const seen = new Set(mine.map((m) => m.messageId));
    expect(seen).toEqual(expected);
    // Every recipient got its own item's message, under that item's Message-ID.
    for (const m of mine) {
      const index = customers.indexOf(m.envelope.to[0]!);
      expect(m.messageId).toBe(messageIdFor(`${runId}:mail[${index}]`, api.config.SMTP_FROM));
    }
    expect(
      (end as unknown as { steps: { executions: { counts: object } }[] }).steps[0]!.executions.counts,
    ).toMatchObject({
      total: 20,
      completed: 20,
    });
  }, 180_000);
});
