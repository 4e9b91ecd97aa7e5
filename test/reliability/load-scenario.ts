/**
 * R8: load on the real API process (its entrypoint as a child process, like a deployment): 50 connections on the read
 * endpoints next to a sustained stream of run starts. Counted: no connection error, no timeout, only 2xx on reads,
 * only 202 or the configured 429 on starts, one run record per 202; the API's heap after the load is within a bound
 * of its heap after warm-up.
 */
import autocannon, { type AutocannonResult } from 'autocannon';
import request from 'supertest';
import { spawnApi, type ApiProcess } from '../helpers/api-process';
import { openTestDb, testConfig } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, insertTemplate } from '../helpers/workflows';
import type { Database } from '../../db/client';

/** Run starts per key and minute: the configured budget the start stream runs into. */
export const RUNS_PER_MINUTE = 40;
const START_CONNECTIONS = 5;

export interface LoadPlan {
  /** Either a number of requests per phase (suite) or a duration in seconds per phase (chaos). */
  reads: { amount: number } | { duration: number };
  starts: { amount: number } | { duration: number };
  connections: number;
}

export interface LoadOutcome {
  warmup: AutocannonResult;
  reads: AutocannonResult;
  starts: AutocannonResult;
  runRecords: number;
  heapAfterWarmup: number;
  heapAfterLoad: number;
  /** The starts were a fixed number of requests, so every answer was counted. */
  exactCount: boolean;
}

export class LoadHarness {
  api!: ApiProcess;
  database!: Database;
  user!: TestUser;
  private paths: string[] = [];
  private workflowId = '';

  async setUp(): Promise<void> {
    const config = testConfig({
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_IP_PER_MINUTE: '100000000',
      RATE_LIMIT_RUNS_PER_MINUTE: String(RUNS_PER_MINUTE),
      // No worker runs here, so every accepted run stays queued: the concurrent-runs limit must stay out of the way
      // of the per-minute budget this scenario measures.
      USER_MAX_CONCURRENT_RUNS: '100000',
    });
    this.database = await openTestDb(config);
    this.user = await createTestUser(this.database.db);
    this.api = await spawnApi(config, { LOG_LEVEL: 'warn' }, { collectableHeap: true });
    // 'warn' hides the "listening" line: wait for the port instead.
    const http = request(`${this.api.url}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await http
        .get('/livez')
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) break;
      if (Date.now() > deadline || this.api.exitStatus() !== null)
        throw new Error(`API did not start:\n${this.api.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const tpl = await actionTemplates(this.database.db, this.user.id);
    for (let i = 0; i < 5; i++)
      await insertTemplate(this.database.db, this.user.id, { step_type: 'agent', name: `agent ${i}` });
    const created = await http
      .post('/api/v1/workflows')
      .set(this.user.auth)
      .send({ name: 'load', steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression: '1' } }] });
    if (created.status !== 201) throw new Error(`create workflow: ${created.status}`);
    this.workflowId = created.body.data.id as string;
    const started = await http.post(`/api/v1/workflows/${this.workflowId}/run`).set(this.user.auth).send({});
    const runId = started.body.data.run_id as string;
    this.paths = [
      '/api/v1/agents?limit=20',
      '/api/v1/agents/tools',
      '/api/v1/workflows',
      `/api/v1/workflows/${this.workflowId}`,
      `/api/v1/workflows/${this.workflowId}/runs`,
      `/api/v1/workflows/runs/${runId}/status`,
    ];
  }

  async tearDown(): Promise<void> {
    await this.api?.kill();
    await this.database?.db.dropDatabase().catch(() => undefined);
    await this.database?.close();
  }

  /**
   * The API's live heap: read after a full collection in the API. Without one, a reading also counts garbage that no
   * collection has freed yet, and two readings of the same live heap differed by more than 100 MB.
   */
  private async heapUsed(): Promise<number> {
    this.api.collectGarbage();
    // The signal is handled between requests; the collection is synchronous, so it is done once /metrics answers.
    await new Promise((r) => setTimeout(r, 200));
    const res = await request(this.api.url).get('/metrics');
    const match = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(res.text);
    if (!match) throw new Error('no nodejs_heap_size_used_bytes in /metrics');
    return Number(match[1]);
  }

  private readLoad(connections: number, size: { amount: number } | { duration: number }) {
    return autocannon({
      url: this.api.url,
      connections,
      timeout: 30,
      ...size,
      headers: this.user.auth,
      requests: this.paths.map((path) => ({ method: 'GET', path })),
    });
  }

  async run(plan: LoadPlan): Promise<LoadOutcome> {
    const warmup = await this.readLoad(plan.connections, plan.reads);
    const heapAfterWarmup = await this.heapUsed();
    const before = await this.database.db.collection('runs').countDocuments({ workflow_id: this.workflowId });
    const [reads, starts] = await Promise.all([
      this.readLoad(plan.connections, plan.reads),
      autocannon({
        url: this.api.url,
        connections: START_CONNECTIONS,
        timeout: 30,
        ...plan.starts,
        requests: [
          {
            method: 'POST',
            path: `/api/v1/workflows/${this.workflowId}/run`,
            headers: { ...this.user.auth, 'content-type': 'application/json' },
            body: '{"input":{}}',
          },
        ],
      }),
    ]);
    const heapAfterLoad = await this.heapUsed();
    const runRecords =
      (await this.database.db.collection('runs').countDocuments({ workflow_id: this.workflowId })) - before;
    return { warmup, reads, starts, runRecords, heapAfterWarmup, heapAfterLoad, exactCount: 'amount' in plan.starts };
  }
}

/** The count-based pass criterion of R8. */
export function expectHealthyUnderLoad(o: LoadOutcome, exitStatus: string | null): void {
  for (const r of [o.warmup, o.reads, o.starts]) {
    expect({ errors: r.errors, timeouts: r.timeouts, '5xx': r['5xx'] }).toEqual({ errors: 0, timeouts: 0, '5xx': 0 });
  }
  expect(Object.keys(o.reads.statusCodeStats)).toEqual(['200']);
  expect(o.reads.requests.total).toBeGreaterThan(0);
  // Starts: accepted or refused by the configured per-key budget, nothing else; every 202 is one recorded run.
  const codes = Object.keys(o.starts.statusCodeStats).sort();
  expect(codes.every((c) => c === '202' || c === '429')).toBe(true);
  const accepted = o.starts.statusCodeStats['202']?.count ?? 0;
  expect(accepted).toBeGreaterThan(0);
  expect(accepted).toBeLessThanOrEqual(RUNS_PER_MINUTE * 2);
  // With a duration, autocannon stops counting with up to one request per start connection still in flight.
  expect(o.runRecords).toBeGreaterThanOrEqual(accepted);
  expect(o.runRecords).toBeLessThanOrEqual(accepted + (o.exactCount ? 0 : START_CONNECTIONS));
  // Everything beyond the budget (two windows at most) was refused.
  expect(o.starts.statusCodeStats['429']?.count ?? 0).toBeGreaterThanOrEqual(
    o.starts.requests.total - 2 * RUNS_PER_MINUTE,
  );
  // Memory: the live heap after the load is the live heap after warm-up, give or take 16 MiB. Here it is about 70 MiB and
  // moved by at most 6 MiB over three rounds of 30 s; a leak of 1 KiB per request adds about 30 MiB in one such round.
  expect(o.heapAfterLoad).toBeLessThan(o.heapAfterWarmup + 16 * 1024 * 1024);
  expect(exitStatus).toBeNull();
}
