/**
 * Minimal TypeScript worker for the bare arm (B0–B3, B8): `tsx bench/bare-worker.ts <temporal address> <task queue>`.
 * Prints "ready" once polling.
 */
import { NativeConnection, Worker, Runtime, DefaultLogger } from '@temporalio/worker';
import * as activities from './bare-activities';

async function main(): Promise<void> {
  const [address, taskQueue] = process.argv.slice(2);
  if (!address || !taskQueue) throw new Error('usage: bare-worker <address> <task queue>');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./bare-workflows'),
    activities,
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`bare worker failed: ${String(err)}\n`);
  process.exit(1);
});
