/**
 * The benchmark's own stack, on free loopback ports: Temporal (in memory, headless), the MongoDB server, the Stepwise
 * API and worker as child processes (as in production), and the reference processes beside them — the bare Temporal
 * worker, the bare Koa handler, the hand-written service's API and worker (bench/hand-written/) — all on the same
 * Temporal and MongoDB servers so that arms are compared in one server configuration.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectDatabase, type Database } from '../db/client';
import { ensureIndexes } from '../db/indexes';
import { createApiKey, createUser } from '../db/users';
import { repoRoot } from '../devstack/paths';
import { freePort, startProcess, waitFor, waitForLog, type Managed } from '../devstack/process';
import { startMongo, startTemporal } from '../devstack/servers';
import { ensureWorkflowBundle } from '../temporal/bundle';
import { generateCodecKey } from '../shared/codec/keys';

export interface BenchStack {
  dir: string;
  temporalAddress: string;
  mongoUri: string;
  dbName: string;
  apiUrl: string;
  apiKey: string;
  userId: string;
  stepwiseQueue: string;
  bareQueue: string;
  bareKoaUrl: string;
  /** The hand-written service (bench/hand-written/): its API, its task queue and its database on the same server. */
  handWritten: { url: string; queue: string; dbName: string };
  /** The worker's Stepwise /metrics (its health port). */
  workerMetricsUrl: string;
  database: Database;
  /** The payload codec keys the API and worker run with (PAYLOAD_CODEC_KEYS): a client reading Stepwise runs needs them. */
  codecKeys: string;
  pids: {
    api: number;
    worker: number;
    bareWorker: number;
    handApi: number;
    handWorker: number;
    database: number;
    temporal: number;
  };
  /**
   * Starts another API process, as the first but on database `dbName` of the same server (B11 reads two data sets
   * side by side); it stops with the stack.
   */
  addApi(name: string, dbName: string): Promise<{ url: string; pid: number }>;
  stop(): Promise<void>;
}

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

function tsx(file: string): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', path.join(repoRoot, file)]];
}

export interface BenchStackOptions {
  /** Reaches the API and worker processes (e.g. the mock LLM's base URL for B6). */
  extraEnv?: NodeJS.ProcessEnv;
  /** When set, the API and worker write V8 CPU profiles here on exit (`--cpu-prof`), for bench/profile-summary.ts. */
  profileDir?: string;
}

export async function startBenchStack(opts: BenchStackOptions = {}): Promise<BenchStack> {
  const extraEnv = opts.extraEnv ?? {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-bench-'));
  const started: Managed[] = [];
  const stop = async () => {
    for (const p of [...started].reverse()) await p.stop(5_000);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [temporal, mongo, bundle] = await Promise.all([
      (async () =>
        startTemporal(
          { port: await freePort(), uiPort: 0, headless: true, logFile: path.join(dir, 'temporal.log') },
          log,
        ))(),
      startMongo({ port: 0, dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') }, log),
      ensureWorkflowBundle(),
    ]);
    started.push(temporal.process, mongo.process);
    const dbName = 'bench';
    const database = await connectDatabase({ uri: mongo.uri, dbName });
    await ensureIndexes(database.db);
    const user = await createUser(database.db, 'bench');
    const { key } = await createApiKey(database.db, user._id, 'bench');

    const apiPort = await freePort();
    const healthPort = await freePort();
    const bareKoaPort = await freePort();
    const handPort = await freePort();
    const codecKeys = generateCodecKey();
    const stepwiseQueue = 'bench-stepwise';
    const bareQueue = 'bench-bare';
    const handQueue = 'bench-hand-written';
    const handDb = 'bench_hand_written';
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      MONGODB_URI: mongo.uri,
      MONGODB_DB: dbName,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: stepwiseQueue,
      WORKFLOW_BUNDLE_PATH: bundle,
      WORKER_HEALTH_PORT: String(healthPort),
      // Production refuses to start without payload encryption; the benchmark measures it as deployed.
      PAYLOAD_CODEC_KEYS: codecKeys,
      API_PORT: String(apiPort),
      // The benchmark measures the engine, not the limiter: limits far above what it sends.
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_RUNS_PER_MINUTE: '100000000',
      RATE_LIMIT_IP_PER_MINUTE: '100000000',
      // C1 and C2 count round trips from the processes' /metrics: an event per MongoDB command, a counter per call.
      METRICS_ROUND_TRIPS: 'true',
      ...extraEnv,
    };
    const spawnTs = (
      name: string,
      file: string,
      args: string[] = [],
      profile = false,
      envOverride: NodeJS.ProcessEnv = {},
    ) => {
      const [cmd, base] = tsx(file);
      const prof =
        profile && opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.profileDir, name)}`] : [];
      const proc = startProcess({
        name,
        command: cmd,
        args: [...prof, ...base, ...args],
        env: { ...env, ...envOverride },
        logFile: path.join(dir, `${name}.log`),
      });
      started.push(proc);
      return proc;
    };
    const worker = spawnTs('worker', 'temporal/main.ts', [], true);
    const api = spawnTs('api', 'api/server.ts', [], true);
    const bareWorker = spawnTs('bare-worker', 'bench/bare-worker.ts', [temporal.address, bareQueue]);
    const bareKoa = spawnTs('bare-koa', 'bench/bare-koa.ts', [mongo.uri, dbName, user._id, String(bareKoaPort)]);
    const handServer = [mongo.uri, handDb, temporal.address, handQueue];
    const handWorker = spawnTs('hand-worker', 'bench/hand-written/worker.ts', handServer);
    const handApi = spawnTs('hand-api', 'bench/hand-written/api.ts', [...handServer, String(handPort)]);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await Promise.all([
      waitFor('the API', () => ok(`${apiUrl}/readyz`), { timeoutMs: 90_000, intervalMs: 200 }),
      waitFor('the worker', () => ok(`http://127.0.0.1:${healthPort}/readyz`), { timeoutMs: 90_000, intervalMs: 200 }),
      waitForLog(bareWorker, /ready/, { timeoutMs: 90_000 }),
      waitForLog(bareKoa, /ready/, { timeoutMs: 90_000 }),
      waitForLog(handWorker, /ready/, { timeoutMs: 90_000 }),
      waitForLog(handApi, /ready/, { timeoutMs: 90_000 }),
    ]);
    log('stack ready');
    return {
      dir,
      temporalAddress: temporal.address,
      mongoUri: mongo.uri,
      dbName,
      apiUrl,
      apiKey: key,
      userId: user._id,
      stepwiseQueue,
      bareQueue,
      bareKoaUrl: `http://127.0.0.1:${bareKoaPort}`,
      handWritten: { url: `http://127.0.0.1:${handPort}`, queue: handQueue, dbName: handDb },
      workerMetricsUrl: `http://127.0.0.1:${healthPort}/metrics`,
      database,
      codecKeys,
      pids: {
        api: api.pid,
        worker: worker.pid,
        bareWorker: bareWorker.pid,
        handApi: handApi.pid,
        handWorker: handWorker.pid,
        database: mongo.process.pid,
        temporal: temporal.process.pid,
      },
      addApi: async (name, otherDb) => {
        const port = await freePort();
        const proc = spawnTs(name, 'api/server.ts', [], false, { MONGODB_DB: otherDb, API_PORT: String(port) });
        const url = `http://127.0.0.1:${port}`;
        await waitFor(name, () => ok(`${url}/readyz`), { timeoutMs: 90_000, intervalMs: 200 });
        return { url, pid: proc.pid };
      },
      stop: async () => {
        await database.close();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function ok(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux). */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (clock ticks of 10 ms).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size of a process in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
