/** API entrypoint: parse config, connect, listen; drain and close on SIGTERM/SIGINT. */
import http from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { loadConfigOrExit } from '../config';
import { connectDatabase } from '../db/client';
import { ensureIndexes, type IndexReport } from '../db/indexes';
import { seedSystemTemplates } from '../db/system-templates';
import { createTemporalClient } from '../temporal/client';
import { createApp } from './app';
import { createLogger } from '../runtime/logger';
import { retryUntil } from '../runtime/startup';
import { startTracing } from '../runtime/tracing';
import { createRoundTripMetrics } from '../runtime/metrics/round-trips';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const tracing = startTracing(config, 'stepwise-api');
  const logger = createLogger(config.LOG_LEVEL, 'api', { traceIds: tracing !== undefined });
  if (config.PAYLOAD_CODEC_KEYS.length === 0) {
    logger.warn('PAYLOAD_CODEC_KEYS is not set: run data goes into Temporal unencrypted (production refuses this)');
  }
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const roundTrips = config.METRICS_ROUND_TRIPS ? createRoundTripMetrics(metrics) : undefined;
  const database = await connectDatabase({
    uri: config.MONGODB_URI,
    dbName: config.MONGODB_DB,
    connect: false,
    ...(roundTrips ? { onCommand: roundTrips.dbCommand } : {}),
  });
  let indexes: IndexReport = { duplicateTemplateNames: [] };
  await retryUntil('MongoDB indexes', async () => (indexes = await ensureIndexes(database.db)), logger);
  if (indexes.duplicateTemplateNames.length > 0) {
    // Stored before names were unique (docs/decisions/0020): the API serves on; the owners rename or delete them.
    logger.warn(
      { duplicates: indexes.duplicateTemplateNames },
      'agent template names held twice by one owner: rename or delete all but one of each; the unique name index ' +
        'is built at the first start without any',
    );
  }
  await retryUntil('system templates', () => seedSystemTemplates(database.db), logger);
  const temporal = createTemporalClient({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    codecKeys: config.PAYLOAD_CODEC_KEYS,
    tracing: tracing !== undefined,
    ...(roundTrips ? { onCall: roundTrips.temporalCall } : {}),
  });
  const app = createApp({ config, db: database.db, temporal, logger, metrics, tracer: tracing?.tracer });
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  server.listen(config.API_PORT, config.API_HOST);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') {
      logger.fatal(`port ${config.API_PORT} is already in use; choose another with API_PORT=<port>`);
      process.exit(1);
    }
    throw err;
  });
  logger.info({ url: `http://${config.API_HOST}:${config.API_PORT}` }, 'API listening');

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    server.closeIdleConnections();
    server.close(() => {
      void Promise.allSettled([database.close(), temporal.connection.close(), tracing?.shutdown()]).then(() =>
        process.exit(0),
      );
    });
    // In-flight requests get a bounded time to finish.
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`api failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
