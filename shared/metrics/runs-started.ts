/**
 * `stepwise_runs_started_total`, declared once for the two processes that start runs: the API counts the runs it
 * accepts, the worker the scheduled runs (a Temporal Schedule starts those; the worker's first activity records them).
 * Summed over both, started minus finished is the runs in flight and never goes negative.
 */
import type { Registry } from 'prom-client';
import { declareMetrics } from './declare';
import type { RunKind } from './run-kind';

export function runsStartedCounter(registry: Registry): (kind: RunKind) => void {
  const started = declareMetrics(registry).counter(
    'stepwise_runs_started_total',
    'Top-level runs started (accepted by the API, or started by a schedule), by workflow kind',
    ['kind'],
  );
  return (kind) => started.labels(kind).inc();
}
