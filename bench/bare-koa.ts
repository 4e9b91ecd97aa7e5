/**
 * The B7 reference: a bare Koa handler doing the same MongoDB query as `GET /api/v1/agents` (system templates plus
 * the caller's own, first page), with no auth, validation, envelope or logging.
 * `tsx bench/bare-koa.ts <mongodb uri> <db> <owner id> <port>`; prints "ready".
 */
import http from 'node:http';
import Koa from 'koa';
import { MongoClient } from 'mongodb';
import { listVisibleTemplates } from '../db/templates';

async function main(): Promise<void> {
  const [uri, dbName, ownerId, port] = process.argv.slice(2);
  if (!uri || !dbName || !ownerId || !port) throw new Error('usage: bare-koa <uri> <db> <owner id> <port>');
  const client = await new MongoClient(uri).connect();
  const db = client.db(dbName);
  const app = new Koa();
  app.use(async (ctx) => {
    ctx.body = { data: (await listVisibleTemplates(db, ownerId, {}, { limit: 50 })).items, error: null };
  });
  const handle = app.callback();
  http
    .createServer((req, res) => void handle(req, res))
    .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`bare koa failed: ${String(err)}\n`);
  process.exit(1);
});
