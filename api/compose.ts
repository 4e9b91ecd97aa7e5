/**
 * The API process's composition root: every object that lives as long as the process is built here, once, and handed
 * down as one `ApiDeps`. `openApi` opens the outside world for server.ts; `composeApi` builds the per-process objects
 * on top of it, and is what tests call too (with connections of their own), so a test app is composed exactly as the
 * served one.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config';
import { connectDatabase } from '../db/client';
import { ensureIndexes, type IndexReport } from '../db/indexes';
import { seedSystemTemplates } from '../db/system-templates';
import { createLogger } from '../shared/logger';
import { createApiMetrics } from './metrics';
import { createRoundTripMetrics } from '../shared/metrics/round-trips';
import { retryUntil } from '../shared/startup';
import { startTracing } from '../shared/tracing';
import { createTemporalClient } from '../shared/temporal-client';
import { createInputValidators } from './commands/input-validators';
import { CloseWatches } from './commands/run-status/long-poll';
import { TemplateLists } from './commands/template-lists';
import type { ApiConnections, ApiDeps } from './deps';
import { KeyCache } from './middleware/key-cache';
import { createRateLimits } from './middleware/rate-limit';
import { StreamSlots } from './middleware/stream-slots';

/** The caches, limiters, watchers and instruments of one API process, on top of its connections. */
export function composeApi(connections: ApiConnections): ApiDeps {
  const { config, db, temporal, metrics } = connections;
  return {
    ...connections,
    apiMetrics: createApiMetrics(metrics),
    limits: createRateLimits(config, db),
    keys: new KeyCache(db, config.API_KEY_CACHE_SECONDS * 1000),
    closeWatches: new CloseWatches(temporal),
    templateLists: new TemplateLists(db),
    inputValidators: createInputValidators(),
    streamSlots: new StreamSlots(config.EVENTS_MAX_STREAMS, config.EVENTS_MAX_STREAMS_PER_USER),
  };
}

/** A composed API process and how to let go of what it opened. */
export interface OpenedApi {
  deps: ApiDeps;
  close: () => Promise<void>;
}

/**
 * Opens what the API process talks to (tracing, logger, metrics, MongoDB with its indexes and system templates,
 * the Temporal client) and composes the rest. Waits for MongoDB (retryUntil), so a stack started in any order comes up.
 */
export async function openApi(config: Config): Promise<OpenedApi> {
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
  const deps = composeApi({ config, db: database.db, temporal, logger, metrics, tracer: tracing?.tracer });
  return {
    deps,
    close: async () => {
      await Promise.allSettled([database.close(), temporal.connection.close(), tracing?.shutdown()]);
    },
  };
}
