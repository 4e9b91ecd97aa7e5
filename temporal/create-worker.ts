/** Builds a Worker from a composed process (compose-worker.ts); the entrypoint and the tests both use it. */
import { OpenTelemetryActivityInboundInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { type InjectedSinks, Worker } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import { createActivities } from './activities';
import { createDataConverter } from '../shared/codec/data-converter';
import type { WorkerDeps } from './compose-worker';
import type { Tracing } from '../shared/tracing';

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
      mailer: deps.mailer,
      expressions: deps.expressions,
      metrics: deps.workerMetrics,
      tracer: deps.tracing?.tracer,
      temporal: deps.starter,
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
    // The SDK sends at most one heartbeat per 80 % of the heartbeat timeout: 8 of our 10 s, leaving 2 s for a busy
    // event loop and the server's timer, and a 100 000-character stream under a loaded CI machine lost its activity
    // to a heartbeat timeout. Activities beat every 2 s; sending each within 3 s leaves 7 s of the 10.
    maxHeartbeatThrottleInterval: '3 seconds',
  });
}
