/**
 * The hand-written service's worker: its workflow and activities with Stepwise's payload codec and failure converter.
 * `tsx bench/hand-written/worker.ts <mongodb uri> <db> <temporal address> <task queue> <codec keys>`; prints "ready".
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { MongoClient } from 'mongodb';
import { parseCodecKeys } from '../../domain/codec-keys';
import { createDataConverter } from '../../shared/codec/data-converter';
import { createActivities } from './activities';

async function main(): Promise<void> {
  const [uri, dbName, address, taskQueue, codecKeys] = process.argv.slice(2);
  if (!uri || !dbName || !address || !taskQueue || !codecKeys)
    throw new Error('usage: hand-written/worker <mongodb uri> <db> <temporal address> <task queue> <codec keys>');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const mongo = await new MongoClient(uri).connect();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createActivities(mongo.db(dbName)),
    dataConverter: createDataConverter(parseCodecKeys(codecKeys).keys),
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
  await connection.close();
  await mongo.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`hand-written worker failed: ${String(err)}\n`);
  process.exit(1);
});
