/**
 * R2: workers killed with SIGKILL mid-run, several times, and replaced. Shared by the fast variant (suite) and the
 * slow one (`npm run test:chaos`). Every run is a five-step workflow with two e-mails and two HTTP calls; the pass
 * criterion is counted, not timed: every run completes, the SMTP server saw exactly one Message-ID per e-mail step
 * (copies after a kill carry the same id), and every HTTP hit of a step carried that run+step's one Idempotency-Key.
 */
import { startHttpSink, type HttpSink, type SinkReply } from '../helpers/http-sink';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import {
  actionTemplates,
  createWorkflow,
  isTerminal,
  startRun,
  waitForStatus,
  type StatusBody,
} from '../helpers/workflows';
import type { JsonValue } from '../../domain/json';
import { messageIdFor } from '../../temporal/mail/message';

export interface KillPlan {
  runs: number;
  /**
   * `hang`: each run's first call to each endpoint never answers, and the worker is killed once every run is stuck
   * there (two kills, deterministic). `random`: calls answer after a short delay, runs start in waves, and after each
   * wave the worker is killed once `eventsPerKill` more distinct e-mails or HTTP calls arrived, wherever the runs are.
   */
  mode: 'hang' | 'random';
  kills: number;
  eventsPerKill?: number;
}

export interface KillOutcome {
  statuses: StatusBody[];
  runIds: string[];
  kills: number;
  smtp: TestSmtp;
  sink: HttpSink;
  from: string;
}

export const MAIL_STEPS = ['hello', 'bye'] as const;
export const HTTP_STEPS = ['hook', 'after'] as const;

export class KillHarness {
  smtp!: TestSmtp;
  sink!: HttpSink;
  api!: TestApi;
  user!: TestUser;
  private workers: WorkerProcess[] = [];

  async setUp(): Promise<void> {
    [this.smtp, this.sink] = await Promise.all([startTestSmtp(), startHttpSink()]);
    this.api = await startTestApi(
      testConfig({ SMTP_URL: this.smtp.url, HTTP_ALLOWED_HOSTS: this.sink.host, RATE_LIMIT_RUNS_PER_MINUTE: '1000' }),
    );
    this.user = await createTestUser(this.api.database.db);
  }

  async tearDown(): Promise<void> {
    for (const w of this.workers) {
      w.kill('SIGKILL');
      await w.exited;
    }
    await this.api?.close();
    await Promise.all([this.smtp?.close(), this.sink?.close()]);
  }

  private async newWorker(): Promise<WorkerProcess> {
    const w = spawnWorker(this.api.config, {
      SMTP_URL: this.smtp.url,
      HTTP_ALLOWED_HOSTS: this.sink.host,
    });
    this.workers.push(w);
    await w.ready;
    return w;
  }

  private async kill(w: WorkerProcess): Promise<void> {
    w.kill('SIGKILL');
    await w.exited;
  }

  /** Waits (bounded) until `pred` holds, re-checking whenever the SMTP server or the sink received something. */
  private async until(what: string, pred: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await Promise.race([
        this.sink.waitForRequests(this.sink.requests.length + 1, undefined, 1_000).catch(() => undefined),
        this.smtp.waitForMessages(this.smtp.messages.length + 1, 1_000).catch(() => undefined),
      ]);
    }
  }

  /** Distinct side effects so far: e-mails by Message-ID plus HTTP calls by Idempotency-Key (repeats not counted). */
  private progress(): number {
    const mails = new Set(this.smtp.messages.map((m) => m.messageId)).size;
    return mails + new Set(this.sink.requests.map((r) => r.headers['idempotency-key'])).size;
  }

  async run(plan: KillPlan): Promise<KillOutcome> {
    const { api, user, sink } = this;
    const tpl = await actionTemplates(api.database.db, user.id);
    const http = (id: string, path: string, body: JsonValue) => ({
      id,
      template_id: tpl.http_request._id,
      // Short per-attempt limit: a killed worker's attempt is retried after at most 6 s (heartbeat timeout).
      timeout_seconds: 6,
      retry: { max_attempts: 10 },
      config: { method: 'POST', url: sink.url(`${path}/{{input.n}}`), body },
    });
    const mail = (id: string, subject: string) => ({
      id,
      template_id: tpl.send_email._id,
      timeout_seconds: 6,
      retry: { max_attempts: 10 },
      config: { to: 'r{{input.n}}@example.test', subject: `${subject} {{input.n}}`, text: 'run {{input.n}}' },
    });
    const wf = await createWorkflow(api, user, {
      name: 'kill -9',
      steps: [
        mail('hello', 'hello'),
        http('hook', '/hook', { n: '{{input.n}}' }),
        {
          id: 'shape',
          template_id: tpl.transform._id,
          config: { expression: '{"n": body.n, "seen": body.received}', data: '{{steps.hook.output}}' },
        },
        http('after', '/after', '{{steps.shape.output}}'),
        mail('bye', 'bye'),
      ],
    });

    for (let n = 0; n < plan.runs; n++) {
      const ok: SinkReply = { status: 200, body: { received: true, n } };
      if (plan.mode === 'hang') {
        sink.route(`/hook/${n}`, [{ hang: true }, ok]);
        sink.route(`/after/${n}`, [{ hang: true }, ok]);
      } else {
        sink.route(`/hook/${n}`, { ...ok, delayMs: 300 });
        sink.route(`/after/${n}`, { ...ok, delayMs: 300 });
      }
    }

    let worker = await this.newWorker();
    const runIds: string[] = [];
    const startRuns = async (count: number) => {
      for (let i = 0; i < count && runIds.length < plan.runs; i++) {
        runIds.push(await startRun(api, user, wf, { n: runIds.length }));
      }
    };

    let kills = 0;
    const hits = (prefix: string) => sink.requests.filter((r) => r.path.startsWith(prefix)).length;
    if (plan.mode === 'hang') {
      await startRuns(plan.runs);
      // Kill 1: every run is inside its `hook` call. Kill 2: every run is inside its `after` call.
      for (const prefix of ['/hook/', '/after/']) {
        await this.until(`${plan.runs} calls to ${prefix}`, () => hits(prefix) >= plan.runs);
        await this.kill(worker);
        kills++;
        worker = await this.newWorker();
      }
    } else {
      // Runs start in waves, one before each kill, so there is always new work for the next kill to interrupt.
      const wave = Math.ceil(plan.runs / plan.kills);
      const per = plan.eventsPerKill ?? 3;
      while (kills < plan.kills) {
        await startRuns(wave);
        const target = this.progress() + per;
        await this.until(`${target} distinct deliveries`, () => this.progress() >= target);
        await this.kill(worker);
        kills++;
        worker = await this.newWorker();
      }
      await startRuns(plan.runs);
    }

    const statuses: StatusBody[] = [];
    for (const id of runIds) statuses.push(await waitForStatus(api, user, id, isTerminal, 180_000));
    return { statuses, runIds, kills, smtp: this.smtp, sink, from: api.config.SMTP_FROM };
  }
}

/** The count-based pass criterion of R2. */
export function expectExactlyOnceEffects(outcome: KillOutcome): void {
  const { statuses, runIds, smtp, sink, from } = outcome;
  expect(statuses.map((s) => s.status)).toEqual(runIds.map(() => 'completed'));

  // E-mail: one Message-ID per run and e-mail step, each the one derived from run id + step id.
  const expectedIds = new Set(runIds.flatMap((r) => MAIL_STEPS.map((s) => messageIdFor(`${r}:${s}`, from))));
  const receivedIds = new Set(smtp.messages.map((m) => m.messageId));
  expect(receivedIds).toEqual(expectedIds);
  expect(receivedIds.size).toBe(runIds.length * MAIL_STEPS.length);
  runIds.forEach((runId, n) => {
    const mine = smtp.messages.filter((m) => m.envelope.to.includes(`r${n}@example.test`));
    expect(new Set(mine.map((m) => m.messageId))).toEqual(
      new Set(MAIL_STEPS.map((s) => messageIdFor(`${runId}:${s}`, from))),
    );
  });

  // HTTP: every hit of a run's step carries that run+step's key, and each step was reached at least once.
  runIds.forEach((runId, n) => {
    for (const step of HTTP_STEPS) {
      const requests = sink.requestsTo(`/${step}/${n}`);
      expect(requests.length).toBeGreaterThanOrEqual(1);
      expect(new Set(requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set([`${runId}:${step}`]));
    }
  });
  const keys = new Set(sink.requests.map((r) => r.headers['idempotency-key']));
  expect(keys.size).toBe(runIds.length * HTTP_STEPS.length);

  // Data still flowed between steps across the kills.
  statuses.forEach((s, n) => expect(s.outputs.shape).toEqual({ n, seen: true }));
}
