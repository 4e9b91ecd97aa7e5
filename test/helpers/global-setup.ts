/**
 * Starts the servers the whole suite shares, on free loopback ports: a Temporal dev server (in memory, headless) and
 * the MongoDB server (a real mongod if on PATH, else the embedded wire server). Their addresses reach the test files
 * through environment variables; global-teardown stops them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../devstack/process';
import { startMongo, startTemporal } from '../../devstack/servers';
import { ensureWorkflowBundle } from '../../temporal/bundle';

const log = (m: string) => process.stdout.write(`[test-stack] ${m}\n`);

export default async function globalSetup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-test-'));
  const [temporal, mongo, bundle] = await Promise.all([
    (async () =>
      startTemporal(
        { port: await freePort(), uiPort: 0, headless: true, logFile: path.join(dir, 'temporal.log') },
        log,
      ))(),
    startMongo({ port: 0, dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') }, log),
    ensureWorkflowBundle(),
  ]);
  process.env.STEPWISE_TEST_DIR = dir;
  process.env.STEPWISE_TEST_TEMPORAL_ADDRESS = temporal.address;
  process.env.STEPWISE_TEST_MONGODB_URI = mongo.uri;
  process.env.STEPWISE_TEST_MONGODB_KIND = mongo.kind;
  process.env.STEPWISE_TEST_BUNDLE = bundle;
  (globalThis as Record<string, unknown>).__stepwiseStack = { temporal, mongo, dir };
}
