/**
 * A test file's own Temporal and MongoDB servers (not the suite's shared ones), so that a reliability test can stop
 * and restart them: same port, same data on disk (Temporal's SQLite file, the MongoDB data directory). Only the
 * processes started here are ever signalled (devstack/process.ts stops a process group it spawned).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../devstack/process';
import { startMongo, startTemporal, type MongoServer, type TemporalServer } from '../../devstack/servers';

const quiet = (): void => undefined;

export interface Restartable {
  /** Address clients use; the same across restarts. */
  readonly address: string;
  /** True while the server process runs. */
  readonly up: boolean;
  /** Stops the server (SIGTERM, SIGKILL after the grace time) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  close(): Promise<void>;
}

function ownDir(prefix: string): string {
  return fs.mkdtempSync(path.join(process.env.STEPWISE_TEST_DIR ?? os.tmpdir(), prefix));
}

/** A Temporal dev server with a persistent SQLite file (`--db-filename`), on a fixed free port. */
export async function startOwnTemporal(): Promise<Restartable> {
  const dir = ownDir('temporal-');
  const port = await freePort();
  const opts = {
    port,
    uiPort: 0,
    headless: true,
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'temporal.log'),
  };
  let server: TemporalServer | undefined = await startTemporal(opts, quiet);
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    await s?.process.stop(10_000);
  };
  return {
    address: `127.0.0.1:${port}`,
    get up() {
      return server !== undefined;
    },
    stop,
    async start() {
      if (server) return;
      server = await startTemporal(opts, quiet);
    },
    async close() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A MongoDB server (mongod or the embedded wire server) with its own data directory, on a fixed port. */
export async function startOwnMongo(): Promise<Restartable & { uri: string }> {
  const dir = ownDir('mongo-');
  const opts = { dataDir: path.join(dir, 'data'), logFile: path.join(dir, 'mongodb.log') };
  let server: MongoServer | undefined = await startMongo({ port: 0, ...opts }, quiet);
  const port = server.port;
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    // SIGTERM: mongod shuts down cleanly, the embedded server flushes its file (its shutdown hook).
    await s?.process.stop(15_000);
  };
  return {
    address: `127.0.0.1:${port}`,
    uri: server.uri,
    get up() {
      return server !== undefined;
    },
    stop,
    async start() {
      if (server) return;
      server = await startMongo({ port, ...opts }, quiet);
    },
    async close() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
