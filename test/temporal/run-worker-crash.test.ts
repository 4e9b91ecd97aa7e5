/**
 * R2 (fast variant): the worker process is killed with SIGKILL in the middle of an HTTP step; another worker takes
 * over. The run completes, the step is retried once with the same Idempotency-Key, and nothing else is repeated.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const ROOT = path.resolve(__dirname, '..', '..');

/** The real worker entrypoint as a child process (so it can be killed like a crashed pod). */
function spawnWorker(api: TestApi, extraEnv: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'temporal/worker.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      MONGODB_URI: api.config.MONGODB_URI,
      MONGODB_DB: api.config.MONGODB_DB,
      TEMPORAL_ADDRESS: api.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: api.config.TEMPORAL_TASK_QUEUE,
      WORKFLOW_BUNDLE_PATH: process.env.STEPWISE_TEST_BUNDLE ?? '',
      ...extraEnv,
    },
    stdio: 'ignore',
  });
}

describe('a worker killed mid-step', () => {
  let sink: HttpSink;
  let api: TestApi;
  let child: ChildProcess | undefined;
  let worker: TestWorker | undefined;
  let user: TestUser;

  beforeAll(async () => {
    sink = await startHttpSink();
    api = await startTestApi(testConfig({ HTTP_ALLOWED_HOSTS: sink.host }));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await worker?.stop();
    await api?.close();
    await sink?.close();
  });

  it('completes the run on another worker; the step is retried with the same idempotency key', async () => {
    const tpl = await actionTemplates(api.database.db, user.id);
    // The first attempt never gets an answer (the worker dies while waiting); the retry gets 200.
    sink.route('/charge', [{ hang: true }, { status: 200, body: { charged: true } }]);
    const wf = await createWorkflow(api, user, {
      name: 'crash',
      steps: [
        { id: 'before', template_id: tpl.transform._id, config: { expression: '"ok"' } },
        { id: 'charge', template_id: tpl.http_request._id, config: { method: 'POST', url: sink.url('/charge') } },
        {
          id: 'after',
          template_id: tpl.transform._id,
          config: { expression: '$', data: '{{steps.charge.output.body}}' },
        },
      ],
    });
    child = spawnWorker(api, { HTTP_ALLOWED_HOSTS: sink.host });
    const runId = await startRun(api, user, wf);
    await sink.waitForRequests(1, '/charge', 60_000);

    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    worker = await startTestWorker(api.config, api.database);
    const done = await waitForStatus(api, user, runId, isTerminal, 60_000);
    expect(done.status).toBe('completed');
    expect(done.outputs.after).toEqual({ charged: true });
    expect(done.steps.map((s) => [s.id, s.attempts])).toEqual([
      ['before', 1],
      ['charge', 2],
      ['after', 1],
    ]);
    const hits = sink.requestsTo('/charge');
    expect(hits).toHaveLength(2);
    expect(new Set(hits.map((h) => h.headers['idempotency-key']))).toEqual(new Set([`${runId}:charge`]));
  }, 120_000);
});
