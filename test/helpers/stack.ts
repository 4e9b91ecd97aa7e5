/**
 * Per-test-file access to the suite's real servers (started by global-setup): a fresh database and task queue per
 * file, the Koa app mounted through supertest, and a real Worker on the shared Temporal server.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { Registry } from 'prom-client';
import request from 'supertest';
import { loadConfig, type Config } from '../../config';
import { connectDatabase, type Database } from '../../db/client';
import type { Db } from 'mongodb';
import { ensureIndexes } from '../../db/indexes';
import { seedSystemTemplates } from '../../db/system-templates';
import { createApp } from '../../api/app';
import { createTemporalClient } from '../../shared/temporal-client';
import { createWorker } from '../../temporal/create-worker';
import { composeWorker } from '../../temporal/compose-worker';
import { createDataConverter } from '../../shared/codec/data-converter';
import { EncryptionCodec } from '../../shared/codec/encryption-codec';
import { parseCodecKeys } from '../../domain/codec-keys';
import { testAppLogger, testLogLevel, testTemporalLogger } from './test-logging';
import { composeApi } from '../../api/compose';

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run the suite with "npm test" (its global setup starts the servers)`);
  return value;
}

/**
 * The suite's payload-encryption key: every test API and worker encrypts what it puts into Temporal, as production
 * must, so the whole suite runs through the codec. One fixed key, so configs built separately still read each other.
 */
export const TEST_PAYLOAD_CODEC_KEYS = 'test-k1:A6Qg0lhJwzJb5SJLkl2sDz6R697/rMc3rpp3+y6b0+w=';

/** The suite key's codec, to read what a test worker wrote (e.g. a fetched history) as the Web UI would. */
export const testCodec = () => new EncryptionCodec(parseCodecKeys(TEST_PAYLOAD_CODEC_KEYS).keys);
/** For replay workers: histories recorded by the suite are encrypted with its key; older ones are plain JSON. */
export const testDataConverter = () => createDataConverter(parseCodecKeys(TEST_PAYLOAD_CODEC_KEYS).keys);

/** The app's logger in tests: silent unless STEPWISE_TEST_LOG_LEVEL asks (test-logging.ts). */
export const silentLogger = testAppLogger();

let runtimeInstalled = false;
/** The Temporal SDK's log lines: unexpected warnings and errors only, one line each (test-logging.ts). */
function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: testTemporalLogger(testLogLevel()) });
  } catch {
    // already installed in this process
  }
}

export function uniqueId(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** A validated Config pointing at the suite's servers, with a fresh database name and task queue. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.STEPWISE_TEST_LOG_LEVEL ? testLogLevel().toLowerCase() : 'silent',
    MONGODB_URI: required('STEPWISE_TEST_MONGODB_URI'),
    MONGODB_DB: uniqueId('test_'),
    TEMPORAL_ADDRESS: required('STEPWISE_TEST_TEMPORAL_ADDRESS'),
    TEMPORAL_TASK_QUEUE: uniqueId('queue-'),
    PAYLOAD_CODEC_KEYS: TEST_PAYLOAD_CODEC_KEYS,
    ...overrides,
  });
}

export async function openTestDb(config: Config): Promise<Database> {
  const database = await connectDatabase({ uri: config.MONGODB_URI, dbName: config.MONGODB_DB });
  await ensureIndexes(database.db);
  return database;
}

/**
 * A fresh test database for the enclosing `describe`: opened before its tests (with the service's indexes), dropped
 * and closed after them. `const database = useTestDb();` then `database.db` inside the tests.
 */
export function useTestDb(): { readonly db: Db } {
  let database: Database | undefined;
  beforeAll(async () => {
    database = await openTestDb(testConfig());
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });
  return {
    get db() {
      if (!database) throw new Error('useTestDb: the database opens in beforeAll');
      return database.db;
    },
  };
}

export interface TestApi {
  config: Config;
  database: Database;
  http: ReturnType<typeof request>;
  temporal: ReturnType<typeof createTemporalClient>;
  /** The app on a real socket (127.0.0.1, free port), for clients supertest cannot be: event streams. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** The real Koa app on a fresh database and the shared Temporal server. */
export async function startTestApi(config: Config = testConfig()): Promise<TestApi> {
  const database = await openTestDb(config);
  // As api/server.ts does at start: every test API sees the system templates.
  await seedSystemTemplates(database.db);
  const temporal = createTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    codecKeys: config.PAYLOAD_CODEC_KEYS,
  });
  const app = createApp(
    composeApi({ config, db: database.db, temporal, logger: silentLogger, metrics: new Registry() }),
  );
  const http = request(app.callback());
  let server: Server | undefined;
  return {
    config,
    database,
    http,
    temporal,
    async listen() {
      if (!server) {
        const handle = app.callback();
        server = createServer((req, res) => void handle(req, res));
        await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      }
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      if (server) {
        server.closeAllConnections();
        await new Promise((resolve) => server!.close(resolve));
      }
      await database.db.dropDatabase().catch(() => undefined);
      await Promise.allSettled([database.close(), temporal.connection.close()]);
    },
  };
}

export interface TestWorker {
  worker: Worker;
  /** The worker's connection. */
  connection: NativeConnection;
  /** Shuts the worker down and waits for run() to return. */
  stop(): Promise<void>;
}

/**
 * A real Worker on the suite's Temporal server, polling `config.TEMPORAL_TASK_QUEUE`, composed as the worker process
 * composes itself (temporal/compose-worker.ts); `metrics`: the registry a test scrapes (a private one otherwise).
 */
export async function startTestWorker(
  config: Config,
  database: Database,
  opts: { metrics?: Registry } = {},
): Promise<TestWorker> {
  quietTemporalRuntime();
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const deps = composeWorker({
    config,
    db: database.db,
    logger: silentLogger,
    connection,
    workflowBundlePath: required('STEPWISE_TEST_BUNDLE'),
    metrics: opts.metrics ?? new Registry(),
  });
  const { expressions } = deps;
  const worker = await createWorker(deps);
  const running = worker.run();
  return {
    worker,
    connection,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await Promise.all([expressions.close(), connection.close()]);
    },
  };
}
