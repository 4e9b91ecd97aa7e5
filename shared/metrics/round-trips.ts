/**
 * Round trips counted (METRICS_ROUND_TRIPS): every MongoDB command a process sends, by command and collection, and
 * every Temporal call the API makes, by gRPC method. The benchmark's counted rows (docs/benchmarks.md, C1 and C2) read
 * them before and after a number of runs. Labels are command, collection and method names: a bounded set, never an id.
 */
import { Counter, type Registry } from 'prom-client';

export interface RoundTripMetrics {
  dbCommand: (command: string, collection: string) => void;
  temporalCall: (method: string) => void;
}

export function createRoundTripMetrics(registry: Registry): RoundTripMetrics {
  const registers = [registry];
  const commands = new Counter({
    name: 'stepwise_db_commands_total',
    help: 'MongoDB commands sent, by command name and collection (- for none); with METRICS_ROUND_TRIPS=true',
    labelNames: ['command', 'collection'] as const,
    registers,
  });
  const calls = new Counter({
    name: 'stepwise_temporal_calls_total',
    help: 'Temporal gRPC calls the API sent (each attempt), by method; with METRICS_ROUND_TRIPS=true',
    labelNames: ['method'] as const,
    registers,
  });
  return {
    dbCommand: (command, collection) => commands.labels(command, collection).inc(),
    temporalCall: (method) => calls.labels(method).inc(),
  };
}
