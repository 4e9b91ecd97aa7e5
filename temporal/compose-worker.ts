/**
 * The worker process's composition root: every object that lives as long as the process is built here, once, and
 * handed down as one `WorkerDeps`. `openWorker` opens the outside world for worker.ts; `composeWorker` builds the
 * per-process objects on top of it and is what tests call too (with a connection and database of their own), so a
 * test worker is composed exactly as the deployed one.
 */
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config';
import { connectDatabase } from '../db/client';
import { createLogger } from '../shared/logger';
import { createRoundTripMetrics } from '../shared/metrics/round-trips';
import { createWorkerMetrics, type WorkerMetrics } from './metrics';
import { retryUntil } from '../shared/startup';
import { startTracing, type Tracing } from '../shared/tracing';
import { ensureWorkflowBundle } from './bundle';
import { createTemporalClient } from '../shared/temporal-client';
import { createDataConverter } from '../shared/codec/data-converter';
import { createExpressionEvaluator, type ExpressionEvaluator } from './expressions/evaluator';
import { evaluatorOptions } from './expressions/limits';
import { createMailer, type Mailer } from './mail/mailer';
import { installTemporalRuntime } from './telemetry-runtime';

/** The outside world a worker talks to: opened by `openWorker` in the process, by the test helpers in tests. */
export interface WorkerConnections {
  config: Config;
  db: Db;
  logger: Logger;
  connection: NativeConnection;
  workflowBundlePath: string;
  /** The registry the worker's /metrics serves; its instruments are registered here. */
  metrics: Registry;
  /** Tracing on (shared/tracing.ts): activities continue the workflow's trace, workflow spans are exported. */
  tracing?: Tracing;
  /** Tests use their own queue so that workers of different test files never steal each other's tasks. */
  taskQueue?: string;
}

/** A composed worker process: its connections plus what is built from them once. */
export interface WorkerDeps extends WorkerConnections {
  /** Closed by whoever composed it, after the worker has stopped (activities may still use it while draining). */
  expressions: ExpressionEvaluator;
  /** One SMTP transport for the send_email action and tool. */
  mailer: Mailer;
  workerMetrics: WorkerMetrics;
  /**
   * Starts runs from activities (a thread's next queued turn, shared/threads/end-turn.ts) over the worker's own
   * connection, encoded like the API's: no second connection to open or close.
   */
  starter: Client;
}

/** The expression evaluator, the mailer and the metric instruments of one worker process. */
export function composeWorker(connections: WorkerConnections): WorkerDeps {
  const { config } = connections;
  return {
    ...connections,
    expressions: createExpressionEvaluator(evaluatorOptions(config)),
    mailer: createMailer(config.SMTP_URL, config.SMTP_FROM),
    workerMetrics: createWorkerMetrics(connections.metrics),
    starter: new Client({
      connection: connections.connection,
      namespace: config.TEMPORAL_NAMESPACE,
      dataConverter: createDataConverter(config.PAYLOAD_CODEC_KEYS),
    }),
  };
}

/** A composed worker process, the client its reconciler uses, and how to let go of what it opened. */
export interface OpenedWorker {
  deps: WorkerDeps;
  /** Describes, results and webhook starts for the reconciler, encoded like the API's (a lazy connection). */
  temporal: Client;
  close: () => Promise<void>;
}

/**
 * Opens what the worker talks to (tracing, the Temporal runtime, logger, metrics, MongoDB, the workflow bundle, the
 * Temporal connection, the reconciler's client) and composes the rest. Waits for Temporal (retryUntil), so a stack
 * started in any order comes up.
 */
export async function openWorker(config: Config): Promise<OpenedWorker> {
  const tracing = startTracing(config, 'stepwise-worker');
  const logger = createLogger(config.LOG_LEVEL, 'worker', { traceIds: tracing !== undefined });
  // Before the first connection: the Runtime is process-wide and fixed once anything uses it.
  installTemporalRuntime(config);
  if (config.PAYLOAD_CODEC_KEYS.length === 0) {
    logger.warn('PAYLOAD_CODEC_KEYS is not set: run data goes into Temporal unencrypted (production refuses this)');
  }
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const database = await connectDatabase({
    uri: config.MONGODB_URI,
    dbName: config.MONGODB_DB,
    connect: false,
    ...(config.METRICS_ROUND_TRIPS ? { onCommand: createRoundTripMetrics(metrics).dbCommand } : {}),
  });
  const workflowBundlePath = config.WORKFLOW_BUNDLE_PATH ?? (await ensureWorkflowBundle());
  let connection: NativeConnection | undefined;
  await retryUntil(
    'Temporal connection',
    async () => {
      connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    },
    logger,
  );
  const deps = composeWorker({
    config,
    db: database.db,
    logger,
    connection: connection!,
    workflowBundlePath,
    metrics,
    ...(tracing ? { tracing } : {}),
  });
  const temporal = createTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    codecKeys: config.PAYLOAD_CODEC_KEYS,
  });
  return {
    deps,
    temporal,
    close: async () => {
      await Promise.allSettled([
        deps.expressions.close(),
        temporal.connection.close(),
        deps.connection.close(),
        database.close(),
        tracing?.shutdown(),
      ]);
    },
  };
}
