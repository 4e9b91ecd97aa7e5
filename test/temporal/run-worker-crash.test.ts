/**
 * R2 (fast variant): the worker process is killed with SIGKILL in the middle of an HTTP step; another worker takes
 * over. The run completes, the step is retried once with the same Idempotency-Key, and nothing else is repeated.
 */
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
// One process, killed by its own pid: a `tsx` CLI wrapper would leave the real worker running as an orphan.
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('a worker killed mid-step', () => {
  let sink: HttpSink;
  let api: TestApi;
  let child: WorkerProcess | undefined;
  let worker: TestWorker | undefined;
  let user: TestUser;

  beforeAll(async () => {
    sink = await startHttpSink();
    api = await startTestApi(testConfig({ HTTP_ALLOWED_HOSTS: sink.host }));
    user = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await child?.exited;
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
    child = spawnWorker(api.config, { HTTP_ALLOWED_HOSTS: sink.host });
    await child.ready;
    const runId = await startRun(api, user, wf);
    await sink.waitForRequests(1, '/charge', 60_000);

    child.kill('SIGKILL');
    expect(await child.exited).toBeNull(); // ended by the signal, not by itself

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
