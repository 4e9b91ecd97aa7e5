/**
 * What the API process is made of, in two layers:
 * - `ApiConnections`: the outside world — settings, the database handle, the Temporal client, the logger, the metrics
 *   registry, the tracer. The process opens them (api/compose.ts `openApi`); a test opens its own (a fresh database).
 * - `ApiDeps`: those plus the per-process objects built from them once (caches, limiters, watchers, metric
 *   instruments), by `composeApi` alone. The app, the root router and every resource router receive this object and
 *   build nothing that lives as long as the process.
 */
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { Config } from '../config';
import type { ApiMetrics } from './metrics';
import type { InputValidators } from './commands/input-validators';
import type { CloseWatches } from './commands/run-status/long-poll';
import type { TemplateLists } from './commands/template-lists';
import type { KeyCache } from './middleware/key-cache';
import type { RateLimits } from './middleware/rate-limit';
import type { StreamSlots } from './middleware/stream-slots';

export interface ApiConnections {
  config: Config;
  db: Db;
  temporal: Client;
  logger: Logger;
  /** The registry /metrics serves; the API's instruments are registered in it. */
  metrics: Registry;
  /** Set only when tracing is on (shared/tracing.ts): every request then gets a span. */
  tracer?: Tracer;
}

export interface ApiDeps extends ApiConnections {
  /** The request counters and histograms, registered in `metrics`. */
  apiMetrics: ApiMetrics;
  limits: RateLimits;
  /** Checked API keys (one cache per process, shared by every router). */
  keys: KeyCache;
  /** Temporal long polls for run ends that status waits may hold (bounded per process). */
  closeWatches: CloseWatches;
  /** Copies of template list pages, used while the templates' versions are unchanged (one per process). */
  templateLists: TemplateLists;
  /** Compiled run input schemas, shared by every way a run starts (API, hooks, schedules). */
  inputValidators: InputValidators;
  /** Open event streams of this process, bounded in total and per user. */
  streamSlots: StreamSlots;
}
