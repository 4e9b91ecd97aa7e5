/**
 * Worker entrypoint: connects to Temporal and MongoDB, runs the run workflow and its activities, and serves its own
 * /livez and /readyz (and the Stepwise /metrics) on WORKER_HEALTH_PORT, and the
 * Temporal SDK's metrics on WORKER_TEMPORAL_METRICS_PORT. SIGTERM/SIGINT drain in-flight activities within the grace time (the SDK installs
 * those signal handlers).
 */
import { NativeConnection } from '@temporalio/worker';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { loadConfigOrExit } from '../config';
import { connectDatabase } from '../db/client';
import { createLogger } from '../runtime/logger';
import { retryUntil } from '../runtime/startup';
import { ensureWorkflowBundle } from './bundle';
import { createWorker } from './create-worker';
import { createExpressionEvaluator } from './expressions/evaluator';
import { evaluatorOptions } from './expressions/limits';
import { createWorkerHealthServer } from './health-server';
import { installTemporalRuntime } from './telemetry-runtime';
import { startTracing } from '../runtime/tracing';
import { createWorkerMetrics } from '../runtime/metrics/worker-metrics';
import { createRoundTripMetrics } from '../runtime/metrics/round-trips';
import { startReconciler } from '../runtime/runs/reconciler';
import { createTemporalClient } from './client';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
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
  const expressions = createExpressionEvaluator(evaluatorOptions(config));
  const workerMetrics = createWorkerMetrics(metrics);
  const worker = await createWorker({
    config,
    db: database.db,
    logger,
    connection: connection!,
    workflowBundlePath,
    expressions,
    metrics: workerMetrics,
    tracing,
  });

  if (config.WORKER_HEALTH_PORT !== undefined) {
    const health = createWorkerHealthServer({ state: () => worker.getState(), metrics });
    health.listen(config.WORKER_HEALTH_PORT, config.API_HOST);
    health.unref();
  }

  // The reconciler's client: describes, results and webhook starts, encoded like the API's (a lazy connection).
  const temporal = createTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    codecKeys: config.PAYLOAD_CODEC_KEYS,
  });
  const stopReconciler =
    config.RECONCILE_INTERVAL_SECONDS > 0
      ? startReconciler(
          { db: database.db, temporal, logger, quietMs: config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000 },
          config.RECONCILE_INTERVAL_SECONDS * 1000,
        )
      : async () => undefined;

  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS }, 'worker running');
  await worker.run();
  await stopReconciler();
  await Promise.allSettled([
    expressions.close(),
    temporal.connection.close(),
    connection!.close(),
    database.close(),
    tracing?.shutdown(),
  ]);
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
