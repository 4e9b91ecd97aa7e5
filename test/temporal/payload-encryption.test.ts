/**
 * What Temporal stores of a run is ciphertext: a run started through the API with a unique marker in its input, run
 * by a real worker, leaves a history in which a client without the codec finds the marker nowhere — not in the input,
 * the step outputs, the memo or the result — while the same history decoded with the codec shows it (so the check can
 * fail). The API's own reads (status, progress query) still work, through the same codec.
 */
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { historyText } from '../helpers/history-text';
import {
  startTestApi,
  startTestWorker,
  testCodec,
  testConfig,
  testDataConverter,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, startRun, waitForStatus, isTerminal } from '../helpers/workflows';
import { EncryptionCodec, ENCRYPTED_ENCODING } from '../../shared/codec/encryption-codec';
import { progressQuery } from '../../domain/messages';

describe('payload encryption in Temporal', () => {
  let api: TestApi;
  let worker: TestWorker | undefined;
  let user: TestUser;
  let bare: Client;

  beforeAll(async () => {
    api = await startTestApi(testConfig());
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    // What anyone with access to the Temporal server (or the Web UI without the codec) sees.
    bare = new Client({ connection: await Connection.connect({ address: api.config.TEMPORAL_ADDRESS }) });
  });
  afterAll(async () => {
    await bare?.connection.close();
    await worker?.stop();
    await api?.close();
  });

  it('a run leaves no plaintext of its input, outputs, memo or result in the history', async () => {
    expect(api.config.PAYLOAD_CODEC_KEYS).not.toHaveLength(0); // the suite runs encrypted by default
    const marker = `secret-${uniqueId()}`;
    const name = `workflow-${uniqueId()}`;
    const tpl = await actionTemplates(api.database.db, user.id);
    const workflowId = await createWorkflow(api, user, {
      name,
      steps: [
        { id: 'echo', template_id: tpl.transform._id, config: { expression: '"seen " & $', data: '{{input.note}}' } },
      ],
    });
    const runId = await startRun(api, user, workflowId, { note: marker });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('completed');
    expect(status.outputs.echo).toBe(`seen ${marker}`);
    // The API's client reads what the worker wrote (a query result is a payload too).
    await expect(api.temporal.workflow.getHandle(runId).query(progressQuery)).resolves.toMatchObject({
      status: 'completed',
    });
    await api.temporal.workflow.getHandle(runId).result();

    const history = await bare.workflow.getHandle(runId).fetchHistory();
    const stored = await historyText(history);
    expect(stored).toContain(ENCRYPTED_ENCODING);
    expect(stored).not.toContain(marker);
    // The memo names the workflow (encrypted); the one place the name is in the clear is its search attribute
    // (StepwiseWorkflowName: search attributes are indexed by the server, so they cannot be encrypted).
    const withoutSearchAttributes = {
      ...history,
      events: (history.events ?? []).map((e) =>
        e.workflowExecutionStartedEventAttributes
          ? {
              ...e,
              workflowExecutionStartedEventAttributes: {
                ...e.workflowExecutionStartedEventAttributes,
                searchAttributes: null,
              },
            }
          : e,
      ),
    };
    expect(await historyText(withoutSearchAttributes)).not.toContain(name);
    expect(stored).toContain(name);
    // The memo, as the server lists it (the SDK's describe() would refuse to read it without the codec).
    const raw = await bare.workflowService.describeWorkflowExecution({
      namespace: api.config.TEMPORAL_NAMESPACE,
      execution: { workflowId: runId },
    });
    const memo = await historyText(raw.workflowExecutionInfo?.memo);
    expect(memo).toContain(ENCRYPTED_ENCODING);
    expect(memo).not.toContain(name);
    expect(memo).not.toContain(user.id);

    const decoded = await historyText(history, new EncryptionCodec(api.config.PAYLOAD_CODEC_KEYS));
    expect(decoded).toContain(marker);
    expect(decoded).toContain(`seen ${marker}`);
    expect(decoded).toContain(name);
    expect(decoded).not.toContain(ENCRYPTED_ENCODING);

    // An encrypted history replays with the worker's codec, and cannot be replayed (read) without it: the workflow
    // task fails on the input it cannot decode.
    const codePath = process.env.STEPWISE_TEST_BUNDLE!;
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath }, dataConverter: testDataConverter() }, history, runId),
    ).resolves.toBeUndefined();
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath } }, history, runId)).rejects.toThrow(
      /workflow task failure/,
    );
  });
  it("a failure's message (which quotes the data it failed on) is encrypted too; the API still reports it", async () => {
    const marker = `secret-${uniqueId()}`;
    const tpl = await actionTemplates(api.database.db, user.id);
    const workflowId = await createWorkflow(api, user, {
      name: 'fails',
      steps: [
        {
          id: 'boom',
          template_id: tpl.transform._id,
          config: { expression: '$error("cannot use " & $)', data: '{{input.note}}' },
        },
      ],
    });
    const runId = await startRun(api, user, workflowId, { note: marker });
    const status = await waitForStatus(api, user, runId, isTerminal);
    expect(status.status).toBe('failed');
    expect(status.error?.message).toContain(marker);
    // The API's client reads Temporal's failure back with the message restored.
    const failure = await api.temporal.workflow
      .getHandle(runId)
      .result()
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(JSON.stringify(failureMessages(failure))).toContain(marker);

    const history = await bare.workflow.getHandle(runId).fetchHistory();
    const stored = await historyText(history);
    expect(stored).toContain('Encoded failure');
    expect(stored).not.toContain(marker);
    expect(await historyText(history, testCodec())).toContain(marker);
  });
});

/** The messages of an error and its causes. */
function failureMessages(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err; e instanceof Error; e = e.cause) out.push(e.message);
  return out;
}
