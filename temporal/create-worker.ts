/** Builds a Worker from explicit dependencies; the entrypoint and the tests both use it. */
import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { createActivities } from './activities';
import type { ExpressionEvaluator } from './expressions/evaluator';
import { createDataConverter } from './codec/data-converter';
import { createMailer } from './mail/mailer';
import { Registry } from 'prom-client';
import { createWorkerMetrics, type WorkerMetrics } from '../runtime/metrics/worker-metrics';

export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  connection: NativeConnection;
  /** Owned by the caller, who closes it after the worker has stopped (activities may still use it while draining). */
  expressions: ExpressionEvaluator;
  workflowBundlePath: string;
  /** Tests use their own queue so that workers of different test files never steal each other's tasks. */
  taskQueue?: string;
  /** The entrypoint's, registered with its /metrics; tests that do not scrape get a private registry. */
  metrics?: WorkerMetrics;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.TEMPORAL_NAMESPACE,
    taskQueue: deps.taskQueue ?? deps.config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { codePath: deps.workflowBundlePath },
    // Payload codecs run in the worker's main thread, outside the sandbox; the failure converter is in the bundle too.
    dataConverter: createDataConverter(deps.config.PAYLOAD_CODEC_KEYS),
    activities: createActivities({
      config: deps.config,
      db: deps.db,
      logger: deps.logger,
      mailer: createMailer(deps.config.SMTP_URL, deps.config.SMTP_FROM),
      expressions: deps.expressions,
      metrics: deps.metrics ?? createWorkerMetrics(new Registry()),
    }),
    shutdownGraceTime: `${deps.config.WORKER_SHUTDOWN_GRACE_SECONDS} seconds`,
  });
}
