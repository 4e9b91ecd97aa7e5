/**
 * The hand-written service (bench/hand-written/), B1/B3/B8's reference, does the work its rows say: it finds the key
 * by hash, records the run, makes the same three keyed requests as B2's Stepwise workflow, writes the outcome to the
 * run record, answers the status from it, and its Temporal payloads are encrypted with Stepwise's codec. T1's chat
 * turn stores the message, streams the model's text to a reader of its events and stores the answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { parseCodecKeys } from '../../domain/codec-keys';
import { createApp } from '../../bench/hand-written/app';
import { HandWrittenClient } from '../../bench/hand-written/client';
import { createHandWrittenWorker } from '../../bench/hand-written/create-worker';
import { chatMessages, runs, seed } from '../../bench/hand-written/store';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { readSse } from '../helpers/sse';
import { TEST_PAYLOAD_CODEC_KEYS, testConfig, testDataConverter, useTestDb } from '../helpers/stack';
import { testTemporalLogger } from '../helpers/test-logging';

describe('the hand-written benchmark service', () => {
  const database = useTestDb();
  const config = testConfig();
  let sink: HttpSink;
  let llm: LlmServer;
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let worker: Worker;
  let server: http.Server;
  let url: string;

  /** A worker runs once (`runUntil`): one for each test that needs it. */
  const newWorker = () =>
    createHandWrittenWorker({
      connection: nativeConnection,
      db: database.db,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      codecKeys: parseCodecKeys(TEST_PAYLOAD_CODEC_KEYS).keys,
      llm: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.baseUrl },
    });

  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() });
    } catch {
      // already installed in this process
    }
    sink = await startHttpSink();
    llm = await startLlmServer();
    connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    const temporal = new Client({ connection, dataConverter: testDataConverter() });
    nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    worker = await newWorker();
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
    await llm.close();
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

  it('a chat turn: the message stored, the model’s text on the events stream as it comes, the answer stored', async () => {
    const { key, workflowId } = await seed(database.db, [sink.url('/x')]);
    const client = new HandWrittenClient(url, key, workflowId);
    const model = llm.script('hand-written-chat', [{ text: 'Hello there, reader.', stream: { chunkChars: 6 } }]);
    const chatId = await client.newChat();
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    await (
      await newWorker()
    ).runUntil(async () => {
      const events = readSse(`${url}/chats/${chatId}/events`, {
        headers: { Authorization: `Bearer ${key}` },
        onOpen: () => opened(),
        stopWhen: (e) => e.event === 'text.delta' && e.data.text === 'Hello ',
        timeoutMs: 30_000,
      });
      await open;
      const turn = await client.sendMessage(chatId, 'hi', `openai:${model.model}`);
      const first = await events;
      expect(first.events.filter((e) => e.event === 'text.delta').map((e) => e.data.text)).toEqual(['Hello ']);
      await new Client({ connection, dataConverter: testDataConverter() }).workflow.getHandle(turn).result();
    });
    client.close();
    const stored = await chatMessages(database.db).find({ chat_id: chatId }).sort({ _id: 1 }).toArray();
    expect(stored.map((m) => [m.role, m.text])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello there, reader.'],
    ]);
    expect(JSON.stringify(model.requests[0]?.body.messages)).toContain('hi');
  });
});
