/**
 * Records histories of the run workflow for the replay test (test/temporal/run-replay.test.ts):
 *
 *   npx tsx test/temporal/record-histories.ts            # every group below
 *   npx tsx test/temporal/record-histories.ts graph      # only the named groups (comma-separated):
 *     basic      every built-in and activity kind, an approval, a failure, a cancellation (run-mixed-*, …)
 *     graph      a branch, a parallel join, a map with a failed item, a loop (run-graph-*)
 *     following  a rerun, a run with a webhook, the delivery (run-follow-*)
 *     pure       transform steps as local activities: a chain, a map, a failure (run-pure-*)
 *     steps      transforms in a diamond, and a chain that stops at a failing step (run-steps-*)
 *     scheduled  scheduled runs: one completed, one refused (run-scheduled-*)
 *     deadline   runs with a deadline timer: met, and passed (run-deadline-*)
 *
 * Starts its own Temporal dev server and database, runs a few representative workflows through the real API and
 * worker, and writes each history to test/temporal/histories/run-<name>.json. Re-record only on purpose: the committed
 * histories are what proves that a change of the workflow code still replays the runs in flight
 * (docs/decisions/0430-shipping-workflow-changes.md says when they are re-recorded).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ensureTemporalCli } from '../../devstack/install';
import { freePort } from '../../devstack/process';
import { startMongo, startTemporal } from '../../devstack/servers';
import { ensureWorkflowBundle } from '../../temporal/bundle';
import { startHttpSink } from '../helpers/http-sink';
import type { JsonObject } from '../../domain/json';
import { startTestSmtp } from '../helpers/smtp';
import { startTestApi, startTestWorker, testConfig } from '../helpers/stack';
import { createTestUser } from '../helpers/users';
import {
  actionTemplates,
  createWorkflow,
  isTerminal,
  startRun,
  temporalFinalStatus,
  waitForStatus,
} from '../helpers/workflows';

const OUT_DIR = path.join(__dirname, 'histories');
const log = (m: string) => process.stdout.write(`[record] ${m}\n`);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-record-'));
  const [temporal, mongo, bundle] = await Promise.all([
    (async () =>
      startTemporal(
        { port: await freePort(), uiPort: 0, headless: true, logFile: path.join(dir, 'temporal.log') },
        log,
      ))(),
    startMongo({ port: 0, dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') }, log),
    ensureWorkflowBundle(),
  ]);
  process.env.STEPWISE_TEST_TEMPORAL_ADDRESS = temporal.address;
  process.env.STEPWISE_TEST_MONGODB_URI = mongo.uri;
  process.env.STEPWISE_TEST_BUNDLE = bundle;
  const smtp = await startTestSmtp();
  const sink = await startHttpSink({
    '/flaky': [{ status: 503 }, { status: 200, body: { ok: true } }],
    '/gone': { status: 404 },
    '/m/gone': { status: 404 },
    '/publish': { status: 404 },
    '/hook': [{ status: 500 }, { status: 200 }],
  });
  // Recorded without payload encryption: committed histories stay readable in review and editable by the replay
  // test's tampering case (test/temporal/payload-encryption.test.ts replays an encrypted history live).
  const api = await startTestApi(
    testConfig({
      SMTP_URL: smtp.url,
      HTTP_ALLOWED_HOSTS: sink.host,
      PAYLOAD_CODEC_KEYS: '',
      WEBHOOK_RETRY_INITIAL_SECONDS: '0.1',
    }),
  );
  const worker = await startTestWorker(api.config, api.database);
  try {
    const user = await createTestUser(api.database.db);
    const tpl = await actionTemplates(api.database.db, user.id);
    const cli = ensureTemporalCli(log);
    // The CLI's JSON is the format historyFromJSON reads (the SDK's own historyToJSON needs the proto classes of the
    // exact protobufjs copy it was built with).
    const save = async (name: string, runId: string) => {
      const json = execFileSync(
        cli,
        ['workflow', 'show', '--workflow-id', runId, '--address', temporal.address, '--output', 'json'],
        { encoding: 'utf8' },
      );
      fs.mkdirSync(OUT_DIR, { recursive: true });
      fs.writeFileSync(path.join(OUT_DIR, `run-${name}.json`), json.endsWith('\n') ? json : `${json}\n`);
      log(`${name}: ${(JSON.parse(json) as { events: unknown[] }).events.length} events`);
    };

    const groups: Record<string, (r: Recorder) => Promise<void>> = {
      basic: recordBasic,
      graph: recordGraphs,
      following: recordFollowing,
      pure: recordPure,
      steps: recordSteps,
      scheduled: recordScheduled,
      deadline: recordDeadline,
    };
    const only = process.argv[2]?.split(',');
    for (const name of only ?? Object.keys(groups)) {
      const group = groups[name];
      if (!group) throw new Error(`no group "${name}": ${Object.keys(groups).join(', ')}`);
      log(`group ${name}`);
      await group({ api, user, tpl, sink, save });
    }
  } finally {
    await worker.stop();
    await api.close();
    await Promise.all([sink.close(), smtp.close()]);
    await Promise.all([temporal.process.stop(5_000), mongo.process.stop(5_000)]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

type Recorder = {
  api: Awaited<ReturnType<typeof startTestApi>>;
  user: Awaited<ReturnType<typeof createTestUser>>;
  tpl: Awaited<ReturnType<typeof actionTemplates>>;
  sink: Awaited<ReturnType<typeof startHttpSink>>;
  save(name: string, runId: string): Promise<void>;
};

/** Every built-in and activity kind, an approval granted, a non-retryable failure, a cancellation on a timer. */
async function recordBasic({ api, user, tpl, sink, save: saveOpen }: Recorder): Promise<void> {
  // The projection is terminal just before the execution closes: record the closed history.
  const save = async (name: string, run: string) => {
    await temporalFinalStatus(api, run);
    await saveOpen(name, run);
  };
  // 1. Every built-in and activity kind in one run, with data passing and one retried attempt.
  const mixed = await createWorkflow(api, user, {
    name: 'mixed',
    steps: [
      { id: 'fetch', template_id: tpl.http_request._id, config: { url: sink.url('/flaky') } },
      {
        id: 'shape',
        template_id: tpl.transform._id,
        config: { expression: '{"ok": body.ok}', data: '{{steps.fetch.output}}' },
      },
      { id: 'pause', template_id: tpl.delay._id, config: { seconds: 1 } },
      {
        id: 'mail',
        template_id: tpl.send_email._id,
        config: { to: 'ops@example.test', subject: 'ok={{steps.shape.output.ok}}', text: 'done' },
      },
    ],
  });
  let run = await startRun(api, user, mixed);
  await waitForStatus(api, user, run, isTerminal);
  await save('mixed-completed', run);

  // 2. Approval granted through the update.
  const approval = await createWorkflow(api, user, {
    name: 'approval',
    steps: [
      { id: 'ask', template_id: tpl.approval._id, config: { message: 'ok?' } },
      { id: 'after', template_id: tpl.transform._id, config: { expression: '"approved"' } },
    ],
  });
  run = await startRun(api, user, approval);
  await waitForStatus(api, user, run, (s) => s.status === 'waiting');
  await api.http.post(`/api/v1/workflows/runs/${run}/approve`).set(user.auth).send({ step_id: 'ask', approved: true });
  await waitForStatus(api, user, run, isTerminal);
  await save('approval-approved', run);

  // 3. A non-retryable failure.
  const failing = await createWorkflow(api, user, {
    name: 'failing',
    steps: [
      { id: 'lookup', template_id: tpl.http_request._id, config: { url: sink.url('/gone') } },
      { id: 'never', template_id: tpl.transform._id, config: { expression: '1' } },
    ],
  });
  run = await startRun(api, user, failing);
  await waitForStatus(api, user, run, isTerminal);
  await save('failed-non-retryable', run);

  // 4. Cancelled while waiting on a timer.
  const sleepy = await createWorkflow(api, user, {
    name: 'sleepy',
    steps: [{ id: 'nap', template_id: tpl.delay._id, config: { seconds: 3600 } }],
  });
  run = await startRun(api, user, sleepy);
  await waitForStatus(api, user, run, (s) => s.steps[0]?.status === 'running');
  await api.http.post(`/api/v1/workflows/runs/${run}/cancel`).set(user.auth).send({});
  await waitForStatus(api, user, run, isTerminal);
  await save('cancelled-timer', run);
}

/** Graph runs: a branch, a parallel join, a map with a failed item (recorded, the others go on) and a loop. */
async function recordGraphs({ api, user, tpl, sink, save }: Recorder): Promise<void> {
  const runToEnd = async (wf: string, input?: JsonObject) => {
    const run = await startRun(api, user, wf, input);
    await waitForStatus(api, user, run, isTerminal);
    // The projection is terminal just before the execution closes: record the closed history.
    await temporalFinalStatus(api, run);
    return run;
  };
  const branch = await createWorkflow(api, user, {
    name: 'branch',
    steps: [
      { id: 'classify', template_id: tpl.transform._id, config: { expression: '{"category": "billing"}' } },
      {
        id: 'billing',
        template_id: tpl.transform._id,
        depends_on: ['classify'],
        when: 'steps.classify.output.category == "billing"',
        config: { expression: '"to billing"' },
      },
      {
        id: 'support',
        template_id: tpl.transform._id,
        depends_on: ['classify'],
        when: 'steps.classify.output.category != "billing"',
        config: { expression: '"to support"' },
      },
      { id: 'join', template_id: tpl.transform._id, depends_on: ['billing', 'support'], config: { expression: '1' } },
    ],
  });
  await save('graph-branch', await runToEnd(branch));

  const parallel = await createWorkflow(api, user, {
    name: 'parallel',
    steps: ['a', 'b', 'c']
      .map((id) => ({
        id,
        template_id: tpl.http_request._id,
        depends_on: [],
        config: { url: sink.url(`/p/${id}`) },
      }))
      .concat([
        {
          id: 'summary',
          template_id: tpl.transform._id,
          depends_on: ['a', 'b', 'c'],
          config: {
            expression: 'a + b + c',
            data: { a: '{{steps.a.output.status}}', b: '{{steps.b.output.status}}', c: '{{steps.c.output.status}}' },
          },
        } as never,
      ]),
  });
  await save('graph-parallel-join', await runToEnd(parallel));

  const map = await createWorkflow(api, user, {
    name: 'map',
    steps: [
      {
        id: 'calls',
        template_id: tpl.http_request._id,
        map: { over: '{{input.paths}}', concurrency: 2, on_item_error: 'continue' },
        config: { url: `${sink.url('/m/')}{{map.item}}` },
      },
    ],
  });
  await save('graph-map-failed-item', await runToEnd(map, { paths: ['ok1', 'gone', 'ok2'] }));

  const loop = await createWorkflow(api, user, {
    name: 'loop',
    steps: [
      {
        id: 'count',
        template_id: tpl.transform._id,
        loop: { until: 'steps.count.output >= 3', max_iterations: 5 },
        config: { expression: 'n + 1', data: { n: '{{loop.iteration}}' } },
      },
    ],
  });
  await save('graph-loop', await runToEnd(loop));
}

/**
 * Following runs: a rerun that takes over the first step's output (no activity for it), a run with a callback URL
 * (it starts the deliverWebhook child), and that delivery (a failed attempt, then delivered).
 */
async function recordFollowing({ api, user, tpl, sink, save }: Recorder): Promise<void> {
  const wf = await createWorkflow(api, user, {
    name: 'publish',
    steps: [
      { id: 'draft', template_id: tpl.transform._id, config: { expression: '"text"' } },
      {
        id: 'publish',
        template_id: tpl.http_request._id,
        retry: { max_attempts: 1 },
        config: { url: sink.url('/publish') },
      },
    ],
  });
  const failed = await startRun(api, user, wf);
  await waitForStatus(api, user, failed, isTerminal);
  sink.route('/publish', { status: 200, body: { ok: true } });
  const res = await api.http.post(`/api/v1/workflows/runs/${failed}/rerun`).set(user.auth).send({});
  const rerun = (res.body as { data: { run_id: string } }).data.run_id;
  await waitForStatus(api, user, rerun, isTerminal);
  await temporalFinalStatus(api, rerun);
  await save('follow-rerun-reused', rerun);

  const hooked = await createWorkflow(api, user, {
    name: 'hooked',
    steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression: '1 + 1' } }],
  });
  const started = await api.http
    .post(`/api/v1/workflows/${hooked}/run`)
    .set(user.auth)
    .send({ callback_url: sink.url('/hook') });
  const run = (started.body as { data: { run_id: string } }).data.run_id;
  await waitForStatus(api, user, run, isTerminal);
  await temporalFinalStatus(api, run);
  await save('follow-webhook-started', run);
  const delivery = `webhook-${run}`;
  await temporalFinalStatus(api, delivery);
  await save('follow-webhook-delivery', delivery);
}

/**
 * Pure steps as local activities: three transforms in a line (data passing), a map of transforms, and a transform whose
 * expression fails (no retries) followed by a step that never runs.
 */
async function recordPure({ api, user, tpl, save }: Recorder): Promise<void> {
  const line = await createWorkflow(api, user, {
    name: 'pure line',
    steps: [
      { id: 'a', template_id: tpl.transform._id, config: { expression: '{"n": n + 1}', data: '{{input}}' } },
      { id: 'b', template_id: tpl.transform._id, config: { expression: 'n * 2', data: '{{steps.a.output}}' } },
      {
        id: 'c',
        template_id: tpl.transform._id,
        config: { expression: '"n=" & $string($)', data: '{{steps.b.output}}' },
      },
    ],
  });
  const ok = await startRun(api, user, line, { n: 1 });
  await waitForStatus(api, user, ok, isTerminal);
  await temporalFinalStatus(api, ok);
  await save('pure-line', ok);

  const mapped = await createWorkflow(api, user, {
    name: 'pure map',
    steps: [
      {
        id: 'double',
        template_id: tpl.transform._id,
        map: { over: '{{input.items}}', concurrency: 2 },
        config: { expression: '$ * 2', data: '{{map.item}}' },
      },
    ],
  });
  const map = await startRun(api, user, mapped, { items: [1, 2, 3] });
  await waitForStatus(api, user, map, isTerminal);
  await temporalFinalStatus(api, map);
  await save('pure-map', map);

  const broken = await createWorkflow(api, user, {
    name: 'pure failing',
    steps: [
      { id: 'bad', template_id: tpl.transform._id, config: { expression: '$error("no")' } },
      { id: 'after', template_id: tpl.transform._id, config: { expression: '1' } },
    ],
  });
  const failed = await startRun(api, user, broken);
  await waitForStatus(api, user, failed, isTerminal);
  await temporalFinalStatus(api, failed);
  await save('pure-failed', failed);
}

/**
 * Pure steps, each its own local activity: two branches that meet again, and a chain that stops at a failing step.
 */
async function recordSteps({ api, user, tpl, save }: Recorder): Promise<void> {
  const diamond = await createWorkflow(api, user, {
    name: 'pure diamond',
    steps: [
      { id: 'a', template_id: tpl.transform._id, config: { expression: 'n', data: '{{input}}' } },
      {
        id: 'b',
        template_id: tpl.transform._id,
        depends_on: ['a'],
        config: { expression: '$ * 10', data: '{{steps.a.output}}' },
      },
      {
        id: 'c',
        template_id: tpl.transform._id,
        depends_on: ['a'],
        config: { expression: '$ + 1', data: '{{steps.a.output}}' },
      },
      {
        id: 'd',
        template_id: tpl.transform._id,
        depends_on: ['b', 'c'],
        config: { expression: 'x + y', data: { x: '{{steps.b.output}}', y: '{{steps.c.output}}' } },
      },
    ],
  });
  const ok = await startRun(api, user, diamond, { n: 3 });
  await waitForStatus(api, user, ok, isTerminal);
  await temporalFinalStatus(api, ok);
  await save('steps-diamond', ok);

  const stopping = await createWorkflow(api, user, {
    name: 'pure line failing',
    steps: [
      { id: 'a', template_id: tpl.transform._id, config: { expression: 'n + 1', data: '{{input}}' } },
      { id: 'b', template_id: tpl.transform._id, config: { expression: '$error("no")', data: '{{steps.a.output}}' } },
      { id: 'c', template_id: tpl.transform._id, config: { expression: '$ + 1', data: '{{steps.b.output}}' } },
    ],
  });
  const failed = await startRun(api, user, stopping, { n: 1 });
  await waitForStatus(api, user, failed, isTerminal);
  await temporalFinalStatus(api, failed);
  await save('steps-stopped', failed);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`[record] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

/**
 * Scheduled runs (scheduledRunWorkflow): one triggered run that completes, and one refused because its template was
 * deleted (recorded failed by the first activity). The schedules are paused with a cron far away; trigger starts each.
 */
async function recordScheduled({ api, user, tpl, save }: Recorder): Promise<void> {
  const scheduledRun = async (wf: string): Promise<{ scheduleId: string; runId: string }> => {
    const created = await api.http
      .post(`/api/v1/workflows/${wf}/schedules`)
      .set(user.auth)
      .send({ spec: { cron: '0 3 1 1 *' }, input: { n: 3 }, paused: true });
    if (created.status !== 201) throw new Error(`create schedule: ${created.status} ${JSON.stringify(created.body)}`);
    const scheduleId = (created.body as { data: { id: string } }).data.id;
    await api.http.post(`/api/v1/schedules/${scheduleId}/trigger`).set(user.auth).send({});
    for (;;) {
      const res = await api.http.get(`/api/v1/runs?schedule_id=${scheduleId}`).set(user.auth);
      const runs = (res.body as { data: { run_id: string; status: string }[] }).data;
      const run = runs[0];
      if (run && ['completed', 'failed'].includes(run.status)) {
        await temporalFinalStatus(api, run.run_id);
        await api.temporal.schedule.getHandle(scheduleId).delete();
        return { scheduleId, runId: run.run_id };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const echo = await createWorkflow(api, user, {
    name: 'scheduled',
    steps: [{ id: 'echo', template_id: tpl.transform._id, config: { expression: 'n', data: '{{input}}' } }],
  });
  await save('scheduled-completed', (await scheduledRun(echo)).runId);

  const own = await api.http
    .post('/api/v1/agents')
    .set(user.auth)
    .send({ name: 'doomed', default_prompt: 'x', step_type: 'action', action_type: 'transform' });
  const doomed = (own.body as { data: { id: string } }).data.id;
  const refused = await createWorkflow(api, user, {
    name: 'scheduled-refused',
    steps: [{ id: 'echo', template_id: doomed, config: { expression: 'n', data: '{{input}}' } }],
  });
  await api.http.delete(`/api/v1/agents/${doomed}`).set(user.auth);
  await save('scheduled-refused', (await scheduledRun(refused)).runId);
}

/**
 * The run's deadline as a workflow timer (temporal/workflows/deadline.ts): a run that ends
 * before it (the timer is cancelled) and one that waits past it (the timer cancels the steps; the workflow records
 * `timed_out` and starts its webhook).
 */
async function recordDeadline({ api, user, tpl, sink, save }: Recorder): Promise<void> {
  const quick = await createWorkflow(api, user, {
    name: 'deadline met',
    config: { timeout_seconds: 600 },
    steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression: '1 + 1' } }],
  });
  const met = await startRun(api, user, quick);
  await waitForStatus(api, user, met, isTerminal);
  await temporalFinalStatus(api, met);
  await save('deadline-met', met);

  const slow = await createWorkflow(api, user, {
    name: 'deadline passed',
    config: { timeout_seconds: 2, callback_url: sink.url('/hook') },
    steps: [{ id: 'ask', template_id: tpl.approval._id, config: { message: 'ok?' } }],
  });
  const passed = await startRun(api, user, slow);
  await waitForStatus(api, user, passed, isTerminal);
  await temporalFinalStatus(api, passed);
  await save('deadline-timed-out', passed);
}
