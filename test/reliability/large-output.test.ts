/**
 * R7: step outputs of several megabytes end the run in a defined state within a bound, never stuck: up to 8 MiB the
 * output is stored by reference (a `blobs` document; Temporal's history carries only the reference) and read back by
 * the status endpoint and by later steps; above it the step fails with `output_too_large`, and the status says so.
 */
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';

const MB3 = 3 * 1024 * 1024;
/** The bound: a run with a large output ends (either way) within this. */
const BOUND_MS = 90_000;

describe('R7: megabyte step outputs', () => {
  let sink: HttpSink;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;

  beforeAll(async () => {
    sink = await startHttpSink({ '/big': { status: 200, bytes: MB3 } });
    api = await startTestApi(testConfig({ HTTP_ALLOWED_HOSTS: sink.host }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await sink?.close();
  });

  /** Bytes of the run's Temporal history as JSON: what large outputs must stay out of. */
  async function historyBytes(runId: string): Promise<number> {
    const history = await api.temporal.workflow.getHandle(runId).fetchHistory();
    return Buffer.byteLength(JSON.stringify(history));
  }

  it('a 3 MB HTTP response body is stored by reference, shown by the status and read by the next step', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'big http',
      steps: [
        {
          id: 'big',
          template_id: tpl.http_request._id,
          config: { url: sink.url('/big'), max_response_bytes: 4 * 1024 * 1024 },
        },
        {
          id: 'size',
          template_id: tpl.transform._id,
          config: { expression: '$length(body)', data: '{{steps.big.output}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal, BOUND_MS);
    expect(status.status).toBe('completed');
    expect(status.outputs.size).toBe(MB3);
    const big = status.outputs.big as { body: string; truncated: boolean; bytes: number };
    expect(big.truncated).toBe(false);
    expect(big.body).toHaveLength(MB3);

    const stored = await api.database.db.collection('runs').findOne({ _id: runId as never });
    expect(JSON.parse(stored?.steps[0].output_json as string)).toEqual({
      stepwise_blob: expect.any(String),
      bytes: expect.any(Number),
    });
    expect(await api.database.db.collection('blobs').countDocuments({ run_id: runId })).toBe(1);
    expect(await historyBytes(runId)).toBeLessThan(256 * 1024);
  });

  it('a 3 MB value built by a transform is stored by reference too', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'big transform',
      steps: [
        { id: 'build', template_id: tpl.transform._id, config: { expression: `$pad("", ${MB3}, "y")` } },
        {
          id: 'check',
          template_id: tpl.transform._id,
          config: { expression: '$length($)', data: '{{steps.build.output}}' },
        },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal, BOUND_MS);
    expect(status.status).toBe('completed');
    expect(status.outputs.check).toBe(MB3);
    expect(status.outputs.build).toHaveLength(MB3);
    expect(await historyBytes(runId)).toBeLessThan(256 * 1024);
  });

  it('an output above the 8 MiB limit fails the step clearly instead of getting stuck', async () => {
    const wf = await createWorkflow(api, user, {
      name: 'too big',
      steps: [
        { id: 'build', template_id: tpl.transform._id, config: { expression: `$pad("", ${9 * 1024 * 1024}, "z")` } },
        { id: 'never', template_id: tpl.transform._id, config: { expression: '1' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    const status = await waitForStatus(api, user, runId, isTerminal, BOUND_MS);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ step_id: 'build', reason: 'non_retryable', code: 'output_too_large' });
    expect(status.error?.message).toContain('limit is 8388608 bytes');
    expect(status.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
    // Not retried: the limit is not transient.
    expect(status.steps[0]!.attempts).toBe(1);
    expect(await api.database.db.collection('blobs').countDocuments({ run_id: runId })).toBe(0);
    // Temporal closes the execution as failed too (the projection may be written a moment before it closes).
    await expect(api.temporal.workflow.getHandle(runId).result()).rejects.toMatchObject({
      cause: { message: expect.stringContaining('limit is 8388608 bytes') },
    });
    expect((await api.temporal.workflow.getHandle(runId).describe()).status.name).toBe('FAILED');
  });
});
