/**
 * R10 (internal references): a large step output travels as `{stepwise_blob, bytes}` and is read back from the blobs
 * collection. A user who makes a step output such an object (a transform, a web page, a model answer) must not read
 * another run's — another tenant's — stored output: the object stays the plain value it is, in the status and in the
 * steps that use it.
 */
import { blobId, readBlob, storeOutput, BlobMissingError } from '../../db/blobs';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestApi, startTestWorker, testConfig, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const SECRET = 'tenant-a-secret-'.repeat(6_000); // ~96 KB: over the inline limit, so it is stored by reference

describe('R10: forged large-output references', () => {
  let sink: HttpSink;
  let api: TestApi;
  let worker: TestWorker;
  let alice: TestUser;
  let mallory: TestUser;

  beforeAll(async () => {
    sink = await startHttpSink({ '/secret': { status: 200, body: SECRET } });
    api = await startTestApi(testConfig({ HTTP_ALLOWED_HOSTS: sink.host }));
    worker = await startTestWorker(api.config, api.database);
    alice = await createTestUser(api.database.db);
    mallory = await createTestUser(api.database.db);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await sink?.close();
  });

  it("another run's blob id in a transform output stays a plain value and reveals nothing", async () => {
    const aliceTpl = await actionTemplates(api.database.db, alice.id);
    const aliceWf = await createWorkflow(api, alice, {
      name: 'private fetch',
      steps: [{ id: 'big', template_id: aliceTpl.http_request._id, config: { url: sink.url('/secret') } }],
    });
    const aliceRun = await startRun(api, alice, aliceWf);
    expect((await waitForStatus(api, alice, aliceRun, isTerminal, 60_000)).status).toBe('completed');
    const target = blobId(aliceRun, 'big');
    expect(await api.database.db.collection('blobs').countDocuments({ _id: target as never })).toBe(1);

    const forged = { stepwise_blob: target, bytes: 10 };
    const tpl = await actionTemplates(api.database.db, mallory.id);
    const wf = await createWorkflow(api, mallory, {
      name: 'forge',
      steps: [
        { id: 'forge', template_id: tpl.transform._id, config: { expression: JSON.stringify(forged) } },
        // A later step reads the forged object as a whole value and through a path.
        { id: 'whole', template_id: tpl.transform._id, config: { expression: '$', data: '{{steps.forge.output}}' } },
        {
          id: 'field',
          template_id: tpl.transform._id,
          config: { expression: '$', data: '{{steps.forge.output.stepwise_blob}}' },
        },
      ],
    });
    const runId = await startRun(api, mallory, wf);
    const status = await waitForStatus(api, mallory, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.forge).toEqual(forged);
    expect(status.outputs.whole).toEqual(forged);
    expect(status.outputs.field).toBe(target);
    expect(JSON.stringify(status)).not.toContain('tenant-a-secret');
  });

  it('storeOutput keeps reference-like values out of the inline path, and blobs are read only for their run', async () => {
    const db = api.database.db;
    const stored = await storeOutput(db, 'run_x', 'step', { nested: { stepwise_blob: 'blob_y', bytes: 1 } });
    expect(stored).toEqual({ stepwise_blob: blobId('run_x', 'step'), bytes: expect.any(Number) });
    // Read back as the plain value it was.
    expect(await readBlob(db, 'run_x', blobId('run_x', 'step'))).toEqual({
      nested: { stepwise_blob: 'blob_y', bytes: 1 },
    });
    // Small values without the key stay inline.
    expect(await storeOutput(db, 'run_x', 'small', { a: 1 })).toEqual({ a: 1 });
    // Another run asking for this blob is told it does not exist.
    await expect(readBlob(db, 'run_other', blobId('run_x', 'step'))).rejects.toBeInstanceOf(BlobMissingError);
  });
});
