/**
 * Round trips counted (METRICS_ROUND_TRIPS): every MongoDB command a process sends, by command and collection, and
 * every Temporal call the API makes, by gRPC method. The benchmark's counted rows (docs/benchmarks.md, C1 and C2) read
 * them before and after a number of runs. Labels are command, collection and method names: a bounded set, never an id.
 */
import type { Registry } from 'prom-client';
import { declareMetrics } from './declare';

export interface RoundTripMetrics {
  dbCommand: (command: string, collection: string) => void;
  temporalCall: (method: string) => void;
}

export function createRoundTripMetrics(registry: Registry): RoundTripMetrics {
  const { counter } = declareMetrics(registry);
  const commands = counter(
    'stepwise_db_commands_total',
    'MongoDB commands sent, by command name and collection (- for none); with METRICS_ROUND_TRIPS=true',
    ['command', 'collection'],
  );
  const calls = counter(
    'stepwise_temporal_calls_total',
    'Temporal gRPC calls the API sent (each attempt), by method; with METRICS_ROUND_TRIPS=true',
    ['method'],
  );
  return {
    dbCommand: (command, collection) => commands.labels(command, collection).inc(),
    temporalCall: (method) => calls.labels(method).inc(),
  };
}
