/**
 * The hand-written service's API process (bench/hand-written/app.ts):
 * `tsx bench/hand-written/api.ts <mongodb uri> <db> <temporal address> <task queue> <port>`, with the payload codec's
 * keys in PAYLOAD_CODEC_KEYS (as Stepwise's processes get them, off the command line); prints "ready".
 */
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { parseCodecKeys } from '../../domain/codec-keys';
import { createDataConverter } from '../../shared/codec/data-converter';
import { createApp } from './app';

async function main(): Promise<void> {
  const [uri, dbName, address, taskQueue, port] = process.argv.slice(2);
  const codecKeys = process.env.PAYLOAD_CODEC_KEYS;
  if (!uri || !dbName || !address || !taskQueue || !codecKeys || !port)
    throw new Error(
      'usage: hand-written/api <mongodb uri> <db> <temporal address> <task queue> <port> (and PAYLOAD_CODEC_KEYS)',
    );
  const mongo = await new MongoClient(uri).connect();
  const temporal = new Client({
    connection: await Connection.connect({ address }),
    dataConverter: createDataConverter(parseCodecKeys(codecKeys).keys),
  });
  const handle = createApp(mongo.db(dbName), temporal, taskQueue).callback();
  http
    .createServer((req, res) => void handle(req, res))
    .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`hand-written api failed: ${String(err)}\n`);
  process.exit(1);
});
