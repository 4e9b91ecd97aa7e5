/** prom-client metrics declared in one line each, all on the process's one registry. */
import { Counter, Histogram, type Registry } from 'prom-client';

export function declareMetrics(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers }),
    histogram: <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers }),
  };
}
