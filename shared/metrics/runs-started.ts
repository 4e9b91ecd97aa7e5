/**
 * `stepwise_runs_started_total`, declared once for the two processes that start runs: the API counts the runs it
 * accepts, the worker the scheduled runs (a Temporal Schedule starts those; the worker's first activity records them).
 * Summed over both, started minus finished is the runs in flight and never goes negative.
 */
import { Counter, type Registry } from 'prom-client';
import type { RunKind } from './run-kind';

export function runsStartedCounter(registry: Registry): (kind: RunKind) => void {
  const started = new Counter({
    name: 'stepwise_runs_started_total',
    help: 'Top-level runs started (accepted by the API, or started by a schedule), by workflow kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const byKind = { agent: started.labels('agent'), action_only: started.labels('action_only') };
  return (kind) => byKind[kind].inc();
}
