/**
 * The hand-written service's worker process (bench/hand-written/create-worker.ts):
 * `tsx bench/hand-written/worker.ts <mongodb uri> <db> <temporal address> <task queue>`, with the payload
 * codec's keys in PAYLOAD_CODEC_KEYS (as Stepwise's processes get them, off the command line); prints "ready".
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { MongoClient } from 'mongodb';
import { parseCodecKeys } from '../../domain/codec-keys';
import { createHandWrittenWorker } from './create-worker';

async function main(): Promise<void> {
  const [uri, dbName, address, taskQueue] = process.argv.slice(2);
  const codecKeys = process.env.PAYLOAD_CODEC_KEYS;
  if (!uri || !dbName || !address || !taskQueue || !codecKeys)
    throw new Error(
      'usage: hand-written/worker <mongodb uri> <db> <temporal address> <task queue> (and PAYLOAD_CODEC_KEYS)',
    );
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const mongo = await new MongoClient(uri).connect();
  const connection = await NativeConnection.connect({ address });
  const worker = await createHandWrittenWorker({
    connection,
    db: mongo.db(dbName),
    taskQueue,
    codecKeys: parseCodecKeys(codecKeys).keys,
    // T1's mock model, as the Stepwise worker gets it.
    llm: { OPENAI_API_KEY: process.env.OPENAI_API_KEY, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL },
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
