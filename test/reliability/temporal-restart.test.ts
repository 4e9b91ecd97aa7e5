/**
 * R3: the Temporal server (its own, with a persistent SQLite file) is stopped and started again on the same port
 * while runs are in flight. Every run the API acknowledged (202) completes once; while Temporal is away, a run start is
 * answered 503 with no run recorded (never a 202, a hang or a 500) and the status endpoint keeps answering from
 * MongoDB.
 */
import { expectEnvelope } from '../helpers/api';
import type { HttpSink } from '../helpers/http-sink';
import type { Restartable } from '../helpers/own-servers';
import type { TestSmtp } from '../helpers/smtp';
import type { TestApi } from '../helpers/stack';
import type { TestUser } from '../helpers/users';
import type { WorkerProcess } from '../helpers/worker-process';
import { createWorkflow, isTerminal, temporalFinalStatus, waitForStatus, type StatusBody } from '../helpers/workflows';
import { messageIdFor } from '../../temporal/mail/message';
import { OUTAGE_STEPS, outageWorkflowBody } from './outage-workflow';
import { startTemporalOutageStack } from './outage-stack';

/** No request may take longer than this: a hang fails the test instead of blocking it. */
const REQUEST_DEADLINE_MS = 20_000;
const RUNS = 4;

describe('R3: Temporal server stopped and restarted during runs', () => {
  let temporal: Restartable;
  let smtp: TestSmtp;
  let sink: HttpSink;
  let api: TestApi;
  let user: TestUser;
  let worker: WorkerProcess | undefined;
  let stack: Awaited<ReturnType<typeof startTemporalOutageStack>>;

  beforeAll(async () => {
    stack = await startTemporalOutageStack();
    ({ temporal, smtp, sink, api, user } = stack);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const start = (wf: string, n: number) =>
    api.http.post(`/api/v1/workflows/${wf}/run`).set(user.auth).timeout(REQUEST_DEADLINE_MS).send({ input: { n } });

  it('every acknowledged run completes; 503 for starts and status from MongoDB while it is down', async () => {
    worker = stack.spawnWorker();
    await worker.ready;
    const wf = await createWorkflow(api, user, await outageWorkflowBody(api.database.db, user, sink, 3));

    /** Run id → the input `n` it was started with (its sink paths and e-mail name it). */
    const acknowledged = new Map<string, number>();
    for (let n = 0; n < RUNS; n++) {
      const res = await start(wf, n);
      expect(res.status).toBe(202);
      acknowledged.set(res.body.data.run_id, n);
    }
    // Every run is past its first step (inside the durable timer) when Temporal goes away.
    await sink.waitForRequests(RUNS, undefined, 60_000);
    await temporal.stop();

    // A start is answered once Temporal has the run: from the first start after Temporal went away, 503, and the
    // record it made is gone again.
    const probe = await start(wf, 100);
    expect(probe.status).toBe(503);
    expectEnvelope(probe, false);
    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(RUNS);

    // All at once (each may take up to the API's 5 s start deadline): starts get 503 in the envelope and leave no
    // record; status is answered from the projection (past the quiet time, so the Temporal check is tried and
    // skipped); readiness says 503.
    const [starts, reads, ready] = await Promise.all([
      Promise.all([200, 201, 202].map((n) => start(wf, n))),
      Promise.all(
        [...acknowledged.keys()].map((runId) =>
          api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(user.auth).timeout(REQUEST_DEADLINE_MS),
        ),
      ),
      api.http.get('/readyz').timeout(REQUEST_DEADLINE_MS),
    ]);
    for (const res of starts) {
      expect(res.status).toBe(503);
      expectEnvelope(res, false);
      expect(res.body.error).toContain('Temporal');
    }
    expect(await api.database.db.collection('runs').countDocuments({ workflow_id: wf })).toBe(acknowledged.size);
    const ids = [...acknowledged.keys()];
    reads.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect((res.body.data as StatusBody).run_id).toBe(ids[i]);
      expect(isTerminal(res.body.data as StatusBody)).toBe(false);
    });
    // After the refused starts: their short-lived queued records are gone again.
    const list = await api.http.get(`/api/v1/workflows/${wf}/runs`).set(user.auth).timeout(REQUEST_DEADLINE_MS);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(acknowledged.size);
    expect(ready.status).toBe(503);

    await temporal.start();

    // The API's connection comes back by itself: a start is acknowledged again (503 only until it has reconnected).
    const deadline = Date.now() + 60_000;
    let after = await start(wf, RUNS);
    while (after.status === 503 && Date.now() < deadline) after = await start(wf, RUNS);
    expect(after.status).toBe(202);
    acknowledged.set(after.body.data.run_id, RUNS);

    const statuses: StatusBody[] = [];
    for (const runId of acknowledged.keys()) statuses.push(await waitForStatus(api, user, runId, isTerminal, 120_000));
    expect(statuses.map((s) => s.status)).toEqual([...acknowledged.keys()].map(() => 'completed'));
    for (const s of statuses) expect(s.steps.map((st) => st.status)).toEqual(OUTAGE_STEPS.map(() => 'completed'));

    // Each acknowledged run did its work once: one e-mail per run, the last call of each run with its own key.
    const messageIds = new Set(smtp.messages.map((m) => m.messageId));
    expect(messageIds).toEqual(
      new Set([...acknowledged.keys()].map((r) => messageIdFor(`${r}:mail`, api.config.SMTP_FROM))),
    );
    acknowledged.forEach((n, runId) => {
      const keys = new Set(sink.requestsTo(`/last/${n}`).map((r) => r.headers['idempotency-key']));
      expect(keys).toEqual(new Set([`${runId}:last`]));
    });
    for (const runId of acknowledged.keys()) {
      expect(await temporalFinalStatus(api, runId)).toBe('COMPLETED');
    }
    // The worker rode out the outage (it reconnects; it did not have to be restarted).
    expect(worker.output()).not.toContain('worker failed');
  }, 300_000);
});
