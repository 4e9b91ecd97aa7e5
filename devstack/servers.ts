/** Starts the local Temporal and MongoDB servers used by `npm run dev` and by the test suite. */
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ensureMongoServer, ensureTemporalCli, type Log } from './install';
import { freePort, isPortOpen, startProcess, waitFor, waitForLog, type Managed } from './process';
import { SEARCH_ATTRIBUTES } from '../domain/search-attributes';

export interface TemporalServer {
  address: string;
  uiUrl: string;
  process: Managed;
}

export interface TemporalServerOptions {
  port: number;
  uiPort: number;
  /** SQLite file that keeps workflow executions across restarts; omit for an in-memory server (tests). */
  dbFile?: string;
  logFile: string;
  headless?: boolean;
  /** The Web UI's remote codec (the API's /codec/<token>): the UI shows decrypted payloads through it. */
  uiCodecEndpoint?: string;
  /** Called synchronously right after the spawn, so a supervisor can stop the server even while it starts. */
  onSpawn?: (proc: Managed) => void;
}

export async function startTemporal(opts: TemporalServerOptions, log: Log): Promise<TemporalServer> {
  const bin = ensureTemporalCli(log);
  if (await isPortOpen(opts.port)) throw new PortTakenError(opts.port, 'DEV_TEMPORAL_PORT', 'Temporal');
  if (!opts.headless && (await isPortOpen(opts.uiPort)))
    throw new PortTakenError(opts.uiPort, 'DEV_TEMPORAL_UI_PORT', 'the Temporal Web UI');
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  args.push(...(opts.headless ? ['--headless'] : ['--ui-port', String(opts.uiPort), '--ui-disable-news-fetch']));
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  if (opts.uiCodecEndpoint && !opts.headless) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  // Workers take the activity tasks their workflow task scheduled straight back (WORKER_EAGER_ACTIVITIES); said
  // here, not left to the server's default.
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  const proc = startProcess({ name: 'temporal', command: bin, args, logFile: opts.logFile });
  opts.onSpawn?.(proc);
  // An open port is not a ready server: until its membership settles, the frontend answers every call with
  // "Frontend is not healthy yet". A worker connecting in that window fails, so wait for a real answer.
  await stopOnFailure(
    proc,
    waitFor('Temporal to listen and be healthy', async () => {
      if (proc.child.exitCode !== null)
        throw new Error(`temporal exited (code ${proc.child.exitCode}); see ${opts.logFile}`);
      const listening = (await isPortOpen(opts.port)) && (opts.headless || (await isPortOpen(opts.uiPort)));
      return listening && frontendAnswers(`127.0.0.1:${opts.port}`);
    }),
  );
  return { address: `127.0.0.1:${opts.port}`, uiUrl: `http://127.0.0.1:${opts.uiPort}`, process: proc };
}

export interface MongoServer {
  uri: string;
  port: number;
  kind: 'mongod' | 'java';
  process: Managed;
}

export interface MongoServerOptions {
  /** 0 picks a free port (the embedded server reports it). */
  port: number;
  dataDir: string;
  logFile: string;
  /** Called synchronously right after the spawn, so a supervisor can stop the server even while it starts. */
  onSpawn?: (proc: Managed) => void;
}

export async function startMongo(opts: MongoServerOptions, log: Log): Promise<MongoServer> {
  const server = ensureMongoServer(log);
  if (opts.port !== 0 && (await isPortOpen(opts.port)))
    throw new PortTakenError(opts.port, 'DEV_MONGODB_PORT', 'MongoDB');
  fs.mkdirSync(opts.dataDir, { recursive: true });
  let proc: Managed;
  let port = opts.port;
  switch (server.kind) {
    case 'mongod': {
      if (port === 0) port = await freePort();
      proc = startProcess({
        name: 'mongod',
        command: server.path,
        args: ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', opts.dataDir, '--quiet'],
        logFile: opts.logFile,
      });
      opts.onSpawn?.(proc);
      const spawned = proc;
      await stopOnFailure(
        spawned,
        waitFor('mongod to listen', async () => {
          if (spawned.child.exitCode !== null) throw new Error(`mongod exited; see ${opts.logFile}`);
          return isPortOpen(port);
        }),
      );
      break;
    }
    case 'java': {
      // The log file is appended to across restarts: only a line printed after this start counts.
      const fromOffset = fs.existsSync(opts.logFile) ? fs.statSync(opts.logFile).size : 0;
      proc = startProcess({
        name: 'mongo-java-server',
        command: server.java,
        args: [
          // The query planner's indexes live in memory (a few hundred bytes an entry): room for millions of entries.
          '-Xmx2g',
          // Extra JVM flags, e.g. a flight recording to profile the server (docs/benchmarks.md, "Where the time goes").
          ...(process.env.STEPWISE_MONGO_JAVA_OPTS?.split(' ').filter(Boolean) ?? []),
          '-cp',
          `${server.launcherClassDir}${path.delimiter}${server.classpath}`,
          'Launcher',
          path.join(opts.dataDir, 'stepwise.mv'),
          String(port),
        ],
        logFile: opts.logFile,
      });
      opts.onSpawn?.(proc);
      const match = await stopOnFailure(
        proc,
        waitForLog(proc, /listening 127\.0\.0\.1:(\d+)/, { timeoutMs: 30_000, fromOffset }),
      );
      port = Number(match[1]);
      break;
    }
  }
  return { uri: `mongodb://127.0.0.1:${port}`, port, kind: server.kind, process: proc };
}

async function frontendAnswers(address: string): Promise<boolean> {
  const connection = Connection.lazy({ address, connectTimeout: 2_000 });
  try {
    await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** A server that never became ready is stopped, not left behind holding its port. */
async function stopOnFailure<T>(proc: Managed, ready: Promise<T>): Promise<T> {
  try {
    return await ready;
  } catch (err) {
    await proc.stop(2_000);
    throw err;
  }
}

export class PortTakenError extends Error {
  constructor(port: number, setting: string, what: string) {
    super(`port ${port} for ${what} is already in use; free it or choose another port with ${setting}=<port>`);
    this.name = 'PortTakenError';
  }
}
