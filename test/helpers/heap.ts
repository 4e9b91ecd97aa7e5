/**
 * The live heap of this process: heapUsed right after a full collection. A plain heapUsed reading also counts garbage
 * not yet collected, which swings by tens of megabytes with the collector's timing and made heap bounds flaky.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | undefined;

/** `gc` without starting node with --expose-gc: the flag is set at run time and a fresh context sees the function. */
function collector(): () => void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  return gc;
}

export function liveHeapBytes(): number {
  collector()();
  return process.memoryUsage().heapUsed;
}
