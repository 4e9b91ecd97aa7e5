/**
 * The real API entrypoint (`node --import tsx api/server.ts`) as a child process on a free port, so that a test can
 * prove the process survives an outage of its backing services (it must answer 503, never exit). Only the process
 * this helper started is ever signalled, by its pid.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../config';
import { formatCodecKeys } from '../../domain/codec-keys';
import { freePort } from '../../devstack/process';

export interface ApiProcess {
  pid: number;
  /** `http://127.0.0.1:<port>`, for supertest's `request(url)`. */
  url: string;
  /** Everything the API wrote (stdout + stderr), for failure messages. */
  output(): string;
  /** Resolves once the API logged that it listens. */
  ready: Promise<void>;
  /** Null while the process runs, else its exit code or signal. */
  exitStatus(): string | null;
  /** SIGKILL (if still running) and wait for the exit. */
  kill(): Promise<void>;
  /** Runs a full garbage collection in the API (only when started with `{ collectableHeap: true }`). */
  collectGarbage(): void;
}

export interface SpawnOptions {
  /** Preload test/helpers/gc-on-signal.cjs, so that collectGarbage() can free everything that is not live. */
  collectableHeap?: boolean;
}

const ROOT = path.resolve(__dirname, '..', '..');

/** Starts the API with the environment a deployment would give it, built from a test Config plus extra variables. */
export async function spawnApi(
  config: Config,
  extraEnv: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    API_HOST: '127.0.0.1',
    API_PORT: String(port),
    MONGODB_URI: config.MONGODB_URI,
    MONGODB_DB: config.MONGODB_DB,
    TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
    PAYLOAD_CODEC_KEYS: formatCodecKeys(config.PAYLOAD_CODEC_KEYS),
    RUN_STATUS_CHECK_AFTER_SECONDS: String(config.RUN_STATUS_CHECK_AFTER_SECONDS),
    RATE_LIMIT_PER_MINUTE: String(config.RATE_LIMIT_PER_MINUTE),
    RATE_LIMIT_RUNS_PER_MINUTE: String(config.RATE_LIMIT_RUNS_PER_MINUTE),
    RATE_LIMIT_IP_PER_MINUTE: String(config.RATE_LIMIT_IP_PER_MINUTE),
    ...extraEnv,
  };
  const gcArgs = options.collectableHeap ? ['--expose-gc', '--require', path.join(__dirname, 'gc-on-signal.cjs')] : [];
  const child = spawn(process.execPath, [...gcArgs, '--import', 'tsx', 'api/server.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start the API process');
  let out = '';
  let markReady: () => void = () => undefined;
  let failReady: (err: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const onData = (chunk: Buffer): void => {
    // Keep the tail only: the API logs every request.
    out = (out + chunk.toString('utf8')).slice(-200_000);
    if (out.includes('"API listening"')) markReady();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // A caller that does not wait for readiness (e.g. quiet log level) must not get an unhandled rejection at exit.
  ready.catch(() => undefined);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      failReady(new Error(`API exited (${code}) before it was ready:\n${out}`));
      resolve();
    });
  });
  return {
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    ready,
    exitStatus: () =>
      child.exitCode !== null ? `exit ${child.exitCode}` : child.signalCode !== null ? child.signalCode : null,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
      await exited;
    },
    collectGarbage() {
      if (!options.collectableHeap) throw new Error('spawnApi: start the API with { collectableHeap: true }');
      process.kill(child.pid!, 'SIGUSR2');
    },
  };
}
