/**
 * Worker entrypoint: composes the process (compose-worker.ts), runs the run workflow and its activities, and serves
 * its own /livez and /readyz (and the Stepwise /metrics) on WORKER_HEALTH_PORT, and the Temporal SDK's metrics on
 * WORKER_TEMPORAL_METRICS_PORT. SIGTERM/SIGINT drain in-flight activities within the grace time (the SDK installs
 * those signal handlers).
 */
import { loadConfigOrExit } from '../config';
import { startReconciler } from './reconciler';
import { openWorker } from './compose-worker';
import { createWorker } from './create-worker';
import { createWorkerHealthServer } from './health-server';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const { deps, temporal, close } = await openWorker(config);
  const { logger } = deps;
  const worker = await createWorker(deps);

  if (config.WORKER_HEALTH_PORT !== undefined) {
    const health = createWorkerHealthServer({ state: () => worker.getState(), metrics: deps.metrics });
    health.listen(config.WORKER_HEALTH_PORT, config.API_HOST);
    health.unref();
  }

  const stopReconciler =
    config.RECONCILE_INTERVAL_SECONDS > 0
      ? startReconciler(
          { db: deps.db, temporal, logger, config, quietMs: config.RUN_STATUS_CHECK_AFTER_SECONDS * 1000 },
          config.RECONCILE_INTERVAL_SECONDS * 1000,
        )
      : async () => undefined;

  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, address: config.TEMPORAL_ADDRESS }, 'worker running');
  await worker.run();
  await stopReconciler();
  await close();
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
