/**
 * The fixtures the outage tests (R3 Temporal, R4 MongoDB; fast and chaos variants) share: the server that will go
 * down is the test file's own (restartable on the same port), the rest are the suite's; a real SMTP server and HTTP
 * sink receive the runs' side effects. For R4 the API runs as a child process, since the point is that it survives.
 */
import request from 'supertest';
import { spawnApi, type ApiProcess } from '../helpers/api-process';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startOwnMongo, startOwnTemporal, type Restartable } from '../helpers/own-servers';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp';
import { openTestDb, startTestApi, testConfig, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';
import { createTemporalClient } from '../../shared/temporal-client';

export interface OutageStack {
  smtp: TestSmtp;
  sink: HttpSink;
  api: TestApi;
  user: TestUser;
  /** A worker child process configured for this stack's SMTP server and sink. */
  spawnWorker(): WorkerProcess;
  close(): Promise<void>;
}

/** Config overrides every outage test uses: side effects reach the test servers, status checks Temporal quickly. */
function outageConfig(smtp: TestSmtp, sink: HttpSink, overrides: Record<string, string>) {
  return testConfig({
    SMTP_URL: smtp.url,
    HTTP_ALLOWED_HOSTS: sink.host,
    RUN_STATUS_CHECK_AFTER_SECONDS: '1',
    ...overrides,
  });
}

function workerSpawner(stack: { api: TestApi; smtp: TestSmtp; sink: HttpSink }, spawned: WorkerProcess[]) {
  return () => {
    const worker = spawnWorker(stack.api.config, { SMTP_URL: stack.smtp.url, HTTP_ALLOWED_HOSTS: stack.sink.host });
    spawned.push(worker);
    return worker;
  };
}

async function stopWorkers(spawned: WorkerProcess[]): Promise<void> {
  for (const w of spawned) {
    w.kill('SIGKILL');
    await w.exited;
  }
}

/** R3: the test's own Temporal server; the API in-process on the suite's MongoDB. */
export async function startTemporalOutageStack(
  overrides: Record<string, string> = {},
): Promise<OutageStack & { temporal: Restartable }> {
  const [temporal, smtp, sink] = await Promise.all([startOwnTemporal(), startTestSmtp(), startHttpSink()]);
  const api = await startTestApi(outageConfig(smtp, sink, { TEMPORAL_ADDRESS: temporal.address, ...overrides }));
  const user = await createTestUser(api.database.db);
  const spawned: WorkerProcess[] = [];
  return {
    temporal,
    smtp,
    sink,
    api,
    user,
    spawnWorker: workerSpawner({ api, smtp, sink }, spawned),
    async close() {
      await stopWorkers(spawned);
      await api.close();
      await Promise.all([temporal.close(), smtp.close(), sink.close()]);
    },
  };
}

/** R4: the test's own MongoDB server; the API as a child process (it must answer 503 and never exit). */
export async function startMongoOutageStack(
  overrides: Record<string, string> = {},
): Promise<OutageStack & { mongo: Restartable & { uri: string }; apiProc: ApiProcess }> {
  const [mongo, smtp, sink] = await Promise.all([startOwnMongo(), startTestSmtp(), startHttpSink()]);
  const config = outageConfig(smtp, sink, { MONGODB_URI: mongo.uri, ...overrides });
  const database = await openTestDb(config);
  const user = await createTestUser(database.db);
  const apiProc = await spawnApi(config);
  await apiProc.ready;
  const temporal = createTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    codecKeys: config.PAYLOAD_CODEC_KEYS,
  });
  const api: TestApi = {
    config,
    database,
    temporal,
    http: request(apiProc.url),
    listen: () => Promise.resolve(apiProc.url),
    close: async () => {
      await Promise.allSettled([database.close(), temporal.connection.close()]);
    },
  };
  const spawned: WorkerProcess[] = [];
  return {
    mongo,
    apiProc,
    smtp,
    sink,
    api,
    user,
    spawnWorker: workerSpawner({ api, smtp, sink }, spawned),
    async close() {
      await stopWorkers(spawned);
      await apiProc.kill();
      await api.close();
      await Promise.all([mongo.close(), smtp.close(), sink.close()]);
    },
  };
}
