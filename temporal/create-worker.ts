/** Builds a Worker from explicit dependencies; the entrypoint and the tests both use it. */
import { OpenTelemetryActivityInboundInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { type InjectedSinks, type NativeConnection, Worker } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { createActivities } from './activities';
import type { ExpressionEvaluator } from './expressions/evaluator';
import { createDataConverter } from './codec/data-converter';
import { createMailer } from './mail/mailer';
import { Registry } from 'prom-client';
import { createWorkerMetrics, type WorkerMetrics } from '../runtime/metrics/worker-metrics';
import type { Tracing } from '../runtime/tracing';

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
  /** Tracing on (runtime/tracing.ts): activities continue the workflow's trace, workflow spans are exported. */
  tracing?: Tracing;
}

/**
 * The sink the bundle's tracing interceptors export workflow spans through. With tracing off a workflow only calls
 * it when its start carried a trace context anyway (an API tracing while this worker does not): dropped.
 */
function workflowSpanSink(tracing: Tracing | undefined): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  if (tracing) return { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) };
  return { exporter: { export: { fn: () => undefined, callDuringReplay: false } } };
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
      tracer: deps.tracing?.tracer,
    }),
    sinks: workflowSpanSink(deps.tracing),
    ...(deps.tracing
      ? {
          interceptors: {
            activity: [
              (ctx) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: deps.tracing?.tracer }),
              }),
            ],
          },
        }
      : {}),
    // A map's first wave and the items one workflow task schedules go to this worker directly when it has free slots,
    // without a round trip through the task queue. The SDK reserves 3 by default: a map of 20 at a time then sent the
    // rest through matching, where each waited 26-34 ms to be picked up, and Stepwise ran 0.65-0.74x bare's
    // throughput (B10) against 1.01-1.10x with 20. Slots are only reserved while free, so a busy worker leaves the
    // tasks to the queue and the other workers.
    maxEagerActivityReservationsPerWorkflowTask: deps.config.WORKER_EAGER_ACTIVITIES,
    shutdownGraceTime: `${deps.config.WORKER_SHUTDOWN_GRACE_SECONDS} seconds`,
  });
}
