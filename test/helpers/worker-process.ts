/**
 * The real worker entrypoint (`node --import tsx temporal/main.ts`) as a child process, so that a test can SIGKILL
 * it mid-run and start another one. Only the process this helper started is ever signalled, by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../../config';
import { formatCodecKeys } from '../../domain/codec-keys';

export interface WorkerProcess {
  pid: number;
  /** Everything the worker wrote (stdout + stderr), for failure messages. */
  output(): string;
  /** Resolves once the worker logged that it is polling. */
  ready: Promise<void>;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

const ROOT = path.resolve(__dirname, '..', '..');

/** Starts a worker with the environment a deployment would give it, built from a test Config plus extra variables. */
export function spawnWorker(config: Config, extraEnv: Record<string, string> = {}): WorkerProcess {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    MONGODB_URI: config.MONGODB_URI,
    MONGODB_DB: config.MONGODB_DB,
    TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: config.TEMPORAL_NAMESPACE,
    TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
    PAYLOAD_CODEC_KEYS: formatCodecKeys(config.PAYLOAD_CODEC_KEYS),
    WORKER_SHUTDOWN_GRACE_SECONDS: '0',
    ...(process.env.STEPWISE_TEST_BUNDLE ? { WORKFLOW_BUNDLE_PATH: process.env.STEPWISE_TEST_BUNDLE } : {}),
    ...extraEnv,
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'temporal/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let markReady: () => void = () => undefined;
  let failReady: (err: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.includes('"worker running"')) markReady();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      failReady(new Error(`worker exited (${code}) before it was ready:\n${out}`));
      resolve(code);
    });
  });
  if (child.pid === undefined) throw new Error('could not start the worker process');
  return {
    pid: child.pid,
    output: () => out,
    ready,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, signal);
    },
  };
}
