/**
 * The hand-written service (bench/hand-written/), B1/B3/B8's reference, does the work its rows say: it finds the key
 * by hash, records the run, makes the same three keyed requests as B2's Stepwise workflow, writes the outcome to the
 * run record, answers the status from it, and its Temporal payloads are encrypted with Stepwise's codec.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { parseCodecKeys } from '../../domain/codec-keys';
import { createApp } from '../../bench/hand-written/app';
import { HandWrittenClient } from '../../bench/hand-written/client';
import { createHandWrittenWorker } from '../../bench/hand-written/create-worker';
import { runs, seed } from '../../bench/hand-written/store';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { TEST_PAYLOAD_CODEC_KEYS, testConfig, testDataConverter, useTestDb } from '../helpers/stack';
import { testTemporalLogger } from '../helpers/test-logging';

describe('the hand-written benchmark service', () => {
  const database = useTestDb();
  const config = testConfig();
  let sink: HttpSink;
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let worker: Worker;
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() });
    } catch {
      // already installed in this process
    }
    sink = await startHttpSink();
    connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    const temporal = new Client({ connection, dataConverter: testDataConverter() });
    nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    worker = await createHandWrittenWorker({
      connection: nativeConnection,
      db: database.db,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      codecKeys: parseCodecKeys(TEST_PAYLOAD_CODEC_KEYS).keys,
    });
    const handle = createApp(database.db, temporal, config.TEMPORAL_TASK_QUEUE).callback();
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await connection.close();
    await nativeConnection.close();
    await sink.close();
  });

  it('refuses an unknown key', async () => {
    const { workflowId } = await seed(database.db, [sink.url('/x')]);
    const res = await fetch(`${url}/workflows/${workflowId}/run`, {
      method: 'POST',
      headers: { Authorization: 'Bearer hw_unknown', 'Content-Type': 'application/json' },
      body: '{"input":{}}',
    });
    expect(res.status).toBe(401);
  });

  it('records the run, makes the three keyed requests, writes the outcome and encrypts its payloads', async () => {
    const { key, workflowId } = await seed(database.db, [sink.url('/s1'), sink.url('/s2'), sink.url('/s3')]);
    const client = new HandWrittenClient(url, key, workflowId);
    let runId = '';
    await worker.runUntil(async () => {
      runId = await client.startRun({ n: 1 });
      await client.waitForCompletion(runId);
    });
    client.close();

    expect(sink.requests.map((r) => [r.path, r.headers['idempotency-key']])).toEqual([
      ['/s1', `${runId}:s1`],
      ['/s2', `${runId}:s2`],
      ['/s3', `${runId}:s3`],
    ]);
    expect(await runs(database.db).findOne({ _id: runId })).toMatchObject({
      workflow_id: workflowId,
      status: 'completed',
      input: { n: 1 },
      output: { status: 200, body: { ok: true } },
    });
    // Read without the codec: what Temporal stores is the encrypted form.
    const plain = new Client({ connection });
    const { events } = await plain.workflow.getHandle(runId).fetchHistory();
    const input = events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(Buffer.from(input?.metadata?.encoding ?? new Uint8Array()).toString('utf8')).toBe('binary/encrypted');
  });
});
