/**
 * The worker process's Temporal Runtime, installed once before any connection or worker exists (the SDK refuses a
 * second install): with WORKER_TEMPORAL_METRICS_PORT set, the SDK's own worker metrics (task slots, poll results,
 * schedule-to-start and execution latencies, sticky cache, workflow task failures) are served in Prometheus format on
 * that port at /metrics. Counters end in `_total` and durations are in seconds, the Prometheus conventions the
 * Stepwise metrics follow too. Only the worker entrypoint calls this: test processes keep the default Runtime.
 */
import { Runtime } from '@temporalio/worker';
import type { Config } from '../config';

/** The address the SDK's exporter binds, or undefined when the SDK metrics are off. */
export function temporalMetricsAddress(config: Config): string | undefined {
  if (config.WORKER_TEMPORAL_METRICS_PORT === undefined) return undefined;
  // An IPv6 host needs brackets in a socket address.
  const host = config.API_HOST.includes(':') ? `[${config.API_HOST}]` : config.API_HOST;
  return `${host}:${config.WORKER_TEMPORAL_METRICS_PORT}`;
}

export function installTemporalRuntime(config: Config): void {
  const bindAddress = temporalMetricsAddress(config);
  if (bindAddress === undefined) return;
  Runtime.install({
    telemetryOptions: {
      metrics: {
        prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
      },
    },
  });
}
