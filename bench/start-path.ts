/**
 * Where the milliseconds of a run start (B1) go: the real app in this process against its own Temporal and MongoDB
 * servers, every MongoDB command and the Temporal start timed (command monitoring and a client interceptor), for
 * `POST /api/v1/workflows/:id/run` of a 3-step workflow, one at a time. Prints each operation's median and how much of
 * the request's time is spent in it. `npm run bench:start-path [-- --runs 60]`
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { Registry } from 'prom-client';
import { createApp } from '../api/app';
import { loadConfig } from '../config';
import { MongoClient } from 'mongodb';
import { ensureIndexes } from '../db/indexes';
import { seedSystemTemplates } from '../db/system-templates';
import { createApiKey, createUser } from '../db/users';
import { freePort } from '../devstack/process';
import { startMongo, startTemporal } from '../devstack/servers';
import { createLogger } from '../shared/logger';
import { createDataConverter } from '../shared/codec/data-converter';
import { generateCodecKey } from '../shared/codec/keys';
import { ApiClient } from './api-client';
import { round, summarize } from './stats';
import { composeApi } from '../api/compose';

const log = (m: string) => process.stderr.write(`[start-path] ${m}\n`);

/** Durations of one request's operations, in the order they ended. */
let current: { op: string; ms: number }[] | null = null;
const record = (op: string, ms: number) => current?.push({ op, ms });

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i >= 0 ? Number(process.argv[i + 1]) : 60;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-start-path-'));
  const temporalServer = await startTemporal(
    { port: await freePort(), uiPort: 0, headless: true, logFile: path.join(dir, 'temporal.log') },
    log,
  );
  const mongo = await startMongo(
    { port: 0, dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') },
    log,
  ).catch(async (err: unknown) => {
    await temporalServer.process.stop(5_000);
    throw err;
  });
  // The servers are stopped however the measurement ends.
  try {
    await measure(temporalServer.address, mongo.uri, runs);
  } finally {
    await mongo.process.stop(5_000);
    await temporalServer.process.stop(5_000);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(temporalAddress: string, mongoUri: string, runs: number): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MONGODB_URI: mongoUri,
    MONGODB_DB: 'start_path',
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: 'start-path',
    PAYLOAD_CODEC_KEYS: generateCodecKey(),
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_RUNS_PER_MINUTE: '100000000',
    // No worker here: the runs stay queued, and the concurrent-runs count must not refuse them.
    USER_MAX_CONCURRENT_RUNS: '100000',
  });
  // Command monitoring on the app's own client: every command's round trip, named by collection.
  const monitored = new MongoClient(config.MONGODB_URI, { monitorCommands: true });
  await monitored.connect();
  // Timed here: the driver's own `duration` is in whole milliseconds, and these commands take about one.
  const started = new Map<number, { op: string; at: number }>();
  monitored.on('commandStarted', (e) => {
    const target = (e.command as Record<string, unknown>)[e.commandName];
    const op = `mongodb ${e.commandName} ${typeof target === 'string' ? target : ''}`.trim();
    started.set(e.requestId, { op, at: performance.now() });
  });
  monitored.on('commandSucceeded', (e) => {
    const start = started.get(e.requestId);
    started.delete(e.requestId);
    record(start?.op ?? e.commandName, start ? performance.now() - start.at : e.duration);
  });
  const db = monitored.db(config.MONGODB_DB);
  await ensureIndexes(db);
  await seedSystemTemplates(db);

  const timing: WorkflowClientInterceptor = {
    async start(input, next) {
      const t0 = performance.now();
      try {
        return await next(input);
      } finally {
        record('temporal start', performance.now() - t0);
      }
    },
  };
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: createDataConverter(config.PAYLOAD_CODEC_KEYS),
    interceptors: { workflow: [timing] },
  });
  const app = createApp(
    composeApi({ config, db, temporal, logger: createLogger('warn', 'api'), metrics: new Registry() }),
  );
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  const user = await createUser(db, 'start-path');
  const { key } = await createApiKey(db, user._id);
  const api = new ApiClient(`http://127.0.0.1:${port}`, key);
  const workflowId = await api.createTransformWorkflow(3, await api.systemTemplateId('transform'));

  const totals: number[] = [];
  const byOp = new Map<string, number[]>();
  for (let n = 0; n < runs + 5; n++) {
    current = [];
    const t0 = performance.now();
    await api.startRun(workflowId, { n });
    const total = performance.now() - t0;
    const ops = current;
    current = null;
    if (n < 5) continue; // warm-up: connections, compiled validators, caches
    totals.push(total);
    const seen = new Map<string, number>();
    for (const { op, ms } of ops) seen.set(op, (seen.get(op) ?? 0) + ms);
    for (const [op, ms] of seen) byOp.set(op, [...(byOp.get(op) ?? []), ms]);
  }
  const total = summarize(totals).p50;
  process.stdout.write(`POST …/run, ${runs} starts one at a time: p50 ${round(total, 1)} ms\n`);
  const rows = [...byOp].map(([op, ms]) => ({ op, p50: summarize(ms).p50, per: ms.length / runs }));
  let accounted = 0;
  for (const r of rows.sort((a, b) => b.p50 - a.p50)) {
    accounted += r.p50 * r.per;
    process.stdout.write(`${round(r.p50, 2).toString().padStart(7)} ms  ×${round(r.per, 2)}  ${r.op}\n`);
  }
  process.stdout.write(
    `${round(total - accounted, 2)
      .toString()
      .padStart(7)} ms      the rest (HTTP, validation, snapshot, encryption, the event loop)\n`,
  );

  api.close();
  server.close();
  await connection.close();
  await monitored.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`start-path failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
