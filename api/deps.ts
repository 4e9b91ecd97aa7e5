/** What the API needs from the outside world, built by server.ts (or a test) and passed into createApp. */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { Config } from '../config';

export interface ApiDeps {
  config: Config;
  db: Db;
  temporal: Client;
  logger: Logger;
  metrics: Registry;
  /** Set only when tracing is on (runtime/tracing.ts): every request then gets a span. */
  tracer?: Tracer;
}
