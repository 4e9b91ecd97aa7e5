/**
 * B6's lowest floor: the bare workflow of model calls started eagerly. Eager workflow start hands the first workflow
 * task back in the start's own answer, skipping the task queue, but only to a worker sharing the starting client's
 * connection in the same process; so this arm runs its own worker here, in the benchmark's process, for the row's
 * duration. It shows what Temporal costs per activity when nothing around it costs anything.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './bare-activities';

const TASK_QUEUE = 'bench-bare-eager';

export interface EagerFloor {
  /** Starts `workflowType` eagerly with `args` and waits for its result. */
  run(workflowType: string, args: unknown[]): Promise<void>;
  /** How many of the starts Temporal really started eagerly (a start without a free slot goes the usual way). */
  readonly eagerlyStarted: number;
  readonly starts: number;
  close(): Promise<void>;
}

let runtimeInstalled = false;

export async function startEagerFloor(temporalAddress: string): Promise<EagerFloor> {
  // The worker's bundling and state changes would print between the rows; only its warnings are news here.
  if (!runtimeInstalled) Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
  const connection = await NativeConnection.connect({ address: temporalAddress });
  const worker = await Worker.create({
    connection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./bare-workflows'),
    activities,
  });
  const running = worker.run();
  const client = new Client({ connection });
  let seq = 0;
  let eagerly = 0;
  return {
    async run(workflowType, args) {
      const handle = await client.workflow.start(workflowType, {
        taskQueue: TASK_QUEUE,
        workflowId: `bare-eager-${process.pid}-${++seq}`,
        args,
        requestEagerStart: true,
      });
      if (handle.eagerlyStarted) eagerly++;
      await handle.result();
    },
    get eagerlyStarted() {
      return eagerly;
    },
    get starts() {
      return seq;
    },
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
