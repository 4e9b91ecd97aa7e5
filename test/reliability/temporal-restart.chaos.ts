/**
 * R3 (slow variant, `npm run test:chaos`): the Temporal server is stopped and restarted three times while runs are in
 * flight, with new runs acknowledged between the outages. Every acknowledged run completes with one e-mail; every
 * start during an outage is a 503 that left no record.
 */
import type { HttpSink } from '../helpers/http-sink';
import type { Restartable } from '../helpers/own-servers';
import type { TestSmtp } from '../helpers/smtp';
import type { TestApi } from '../helpers/stack';
import type { TestUser } from '../helpers/users';
import type { WorkerProcess } from '../helpers/worker-process';
import { createWorkflow, isTerminal, waitForStatus } from '../helpers/workflows';
import { messageIdFor } from '../../temporal/mail/message';
import { outageWorkflowBody } from './outage-workflow';
import { startTemporalOutageStack } from './outage-stack';

const OUTAGES = 3;
const RUNS_PER_ROUND = 3;

describe('R3 chaos: repeated Temporal outages', () => {
  let temporal: Restartable;
  let smtp: TestSmtp;
  let sink: HttpSink;
  let api: TestApi;
  let user: TestUser;
  let worker: WorkerProcess | undefined;
  let stack: Awaited<ReturnType<typeof startTemporalOutageStack>>;

  beforeAll(async () => {
    stack = await startTemporalOutageStack({ RATE_LIMIT_RUNS_PER_MINUTE: '1000' });
    ({ temporal, smtp, sink, api, user } = stack);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('every acknowledged run completes across three outages', async () => {
    worker = stack.spawnWorker();
    await worker.ready;
    const wf = await createWorkflow(api, user, await outageWorkflowBody(api.database.db, user, sink, 2));
    const acknowledged: string[] = [];
    let refused = 0;
    const start = async () => {
      const res = await api.http
        .post(`/api/v1/workflows/${wf}/run`)
        .set(user.auth)
        .timeout(20_000)
        .send({ input: { n: acknowledged.length } });
      if (res.status === 202) acknowledged.push(res.body.data.run_id);
      else if (res.status === 503) refused++;
      else throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
      return res.status;
    };

    for (let round = 0; round < OUTAGES; round++) {
      // New runs (retrying the 503s of a connection that is still coming back), then wait until they all started.
      const target = acknowledged.length + RUNS_PER_ROUND;
      const deadline = Date.now() + 60_000;
      while (acknowledged.length < target && Date.now() < deadline) await start();
      expect(acknowledged.length).toBe(target);
      await sink.waitForRequests(target, undefined, 60_000);

      await temporal.stop();
      for (let i = 0; i < 3; i++) expect(await start()).toBe(503);
      for (const runId of acknowledged) {
        const res = await api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth).timeout(20_000);
        expect(res.status).toBe(200);
      }
      await temporal.start();
    }

    for (const runId of acknowledged) {
      expect((await waitForStatus(api, user, runId, isTerminal, 180_000)).status).toBe('completed');
    }
    expect(refused).toBeGreaterThanOrEqual(3 * OUTAGES);
    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(acknowledged.length);
    expect(new Set(smtp.messages.map((m) => m.messageId))).toEqual(
      new Set(acknowledged.map((r) => messageIdFor(`${r}:mail`, api.config.SMTP_FROM))),
    );
  }, 600_000);
});
