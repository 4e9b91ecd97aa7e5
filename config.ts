/**
 * The one place that reads process.env. Every entrypoint calls loadConfig() once and passes the typed result down;
 * a bad value stops the process with every problem listed (every setting: docs/configuration.md).
 */
import { z } from 'zod';
import { parseHostEntry } from './domain/address-policy';
import { parseCodecKeys } from './domain/codec-keys';
import { MCP_STDIO_NAME } from './domain/mcp';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** `scheme://host[:port]` exactly, as browsers send it in the Origin header. */
function isOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}

/** One operator-declared stdio MCP server: what the worker launches (never anything a user wrote). */
const mcpStdioServer = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).max(100).optional(),
  /** The child's environment beyond the SDK's few safe defaults (PATH, HOME, …): never the worker's own. */
  env: z.record(z.string(), z.string()).optional(),
  /** The only tools of this server any agent may use (absent or null: all). */
  allowed_tools: z.array(z.string().min(1).max(128)).max(100).nullable().optional(),
});

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  /** Base URL clients use to reach the API; status_url and Link headers are built from it. */
  PUBLIC_URL: z.url().optional(),
  /** Request bodies above this many bytes get 413. */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  RATE_LIMIT_RUNS_PER_MINUTE: z.coerce.number().int().positive().default(60),
  RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** How long a checked API key is trusted without reading it again: the bound on how late a revocation bites. */
  API_KEY_CACHE_SECONDS: z.coerce.number().min(0).max(300).default(5),
  /** Origins (`https://app.example.com`) allowed to call the API from a browser; `*` for any; empty: no CORS. */
  CORS_ORIGINS: csv
    .pipe(
      z.array(
        z.string().refine((v) => v === '*' || isOrigin(v), 'each entry must be an origin (scheme://host[:port]) or *'),
      ),
    )
    .default([]),
  /**
   * Spending limits (docs/runs.md "Budgets"). The run limits are the default and the ceiling of a workflow's
   * `config.budget`; the run snapshot carries the effective values, so a change here never alters a run in flight.
   */
  RUN_MAX_TOKENS: z.coerce.number().int().positive().default(1_000_000),
  RUN_MAX_MODEL_CALLS: z.coerce.number().int().positive().default(200),
  USER_MAX_CONCURRENT_RUNS: z.coerce.number().int().positive().default(50),
  /**
   * Run event streams (GET …/runs/:runId/events, docs/runs.md "Following a run"): how often an open stream checks
   * the run's event counter, its heartbeat, how many may be open per API process and per user, and how long one
   * stays open before the server ends it (the client resumes with Last-Event-ID).
   */
  EVENTS_POLL_MS: z.coerce.number().int().min(20).max(10_000).default(250),
  EVENTS_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  EVENTS_MAX_STREAMS: z.coerce.number().int().positive().default(500),
  EVENTS_MAX_STREAMS_PER_USER: z.coerce.number().int().positive().default(20),
  EVENTS_MAX_STREAM_SECONDS: z.coerce.number().int().min(1).default(1800),
  // Live model text (agent.text.delta events) expires from the run's event log after this long; the transcript keeps
  // the final text for good.
  STREAM_DELTAS_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(24),
  // Graph limits (docs/graphs.md): checked on write and frozen into each run's snapshot.
  MAP_MAX_ITEMS: z.coerce.number().int().positive().max(10_000).default(1000),
  MAP_MAX_CONCURRENCY: z.coerce.number().int().positive().max(100).default(20),
  LOOP_MAX_ITERATIONS: z.coerce.number().int().positive().max(1000).default(100),
  SUBWORKFLOW_MAX_DEPTH: z.coerce.number().int().positive().max(10).default(3),
  // An experiment's workflow continues as new after this many item runs (or sooner when Temporal suggests it), so the
  // history of an experiment over any number of items stays bounded (decision 0630). Tests lower it.
  EXPERIMENT_UNITS_PER_EXECUTION: z.coerce.number().int().positive().max(2000).default(500),
  USER_MAX_TOKENS_PER_DAY: z.coerce.number().int().positive().default(10_000_000),
  /**
   * The operator's price table: USD per million input and output tokens, by model as steps name it
   * (`{"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6}}`). GET /api/v1/usage prices the counted tokens with it
   * when it answers (decision 0531); a model without a price shows its tokens with a null cost.
   */
  MODEL_PRICES: z
    .string()
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object: {"<model>": {"input": 0.15, "output": 0.6}}' });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(
        z.string().min(1).max(200),
        z.strictObject({ input: z.number().nonnegative().finite(), output: z.number().nonnegative().finite() }),
      ),
    )
    .default({}),

  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .default('mongodb://127.0.0.1:27017'),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, _ and - only')
    .default('stepwise'),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('stepwise'),
  TEMPORAL_UI_URL: z.url().default('http://127.0.0.1:8233'),
  /**
   * Payload encryption (shared/codec): `keyid:base64-32-bytes`, comma-separated. The first key encrypts, every key
   * decrypts (rotation: put the new key first, keep the old ones while their histories are kept). Required in production.
   */
  PAYLOAD_CODEC_KEYS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const { keys, problems } = parseCodecKeys(value);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      return keys;
    }),
  /**
   * The Temporal Web UI's credential for the API's codec endpoint (/codec/<token>): whoever holds it reads every
   * tenant's payloads. Unset: the endpoint answers 404.
   */
  CODEC_ACCESS_TOKEN: z
    .string()
    .min(32, 'at least 32 characters (openssl rand -hex 32)')
    .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" and "-" only: it is part of a URL')
    .optional(),
  /** A prebuilt workflow bundle (npm run build:workflows); without it the worker bundles once and caches. */
  WORKFLOW_BUNDLE_PATH: z.string().optional(),
  /** A non-terminal run whose projection has not changed for this long is checked against Temporal on a status read. */
  RUN_STATUS_CHECK_AFTER_SECONDS: z.coerce.number().int().min(1).default(10),
  /**
   * How often each worker's reconciler (temporal/reconciler.ts) looks for runs Temporal has closed behind the
   * projection's back; 0 turns it off. Every write it makes is conditional, so several workers may run it at once.
   */
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().min(0).default(30),
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).default(10),
  /**
   * Activity tasks a worker may take straight back from Temporal when it completes a workflow task that scheduled
   * them (eager dispatch, temporal/create-worker.ts), skipping the task queue; 0 turns it off.
   */
  WORKER_EAGER_ACTIVITIES: z.coerce.number().int().min(0).max(1000).default(20),
  /**
   * Count every MongoDB command (driver command monitoring) and every Temporal call the API makes on /metrics
   * (stepwise_db_commands_total, stepwise_temporal_calls_total): round trips per request or step, as the benchmark's
   * counted rows read them. Off by default: the monitoring costs an event per command.
   */
  METRICS_ROUND_TRIPS: bool.default(false),
  WORKER_HEALTH_PORT: port.optional(),
  /** The Temporal SDK's worker metrics (Prometheus, /metrics) on this port; off when unset (temporal/telemetry-runtime.ts). */
  WORKER_TEMPORAL_METRICS_PORT: port.optional(),
  // Tracing (OpenTelemetry, the standard variables): off unless an OTLP endpoint is set (shared/tracing.ts).
  /** OTLP/HTTP base URL (`…:4318`); traces go to `<it>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** The full traces URL, when it is not `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`; setting it alone turns tracing on. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** `key=value` pairs, comma-separated, sent with every export (e.g. a collector's auth header). */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** The service name on the spans; default `stepwise-api` / `stepwise-worker` by process. */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),

  /** Expressions (transform, json_transform) run in this many separate evaluator processes, reused between calls. */
  EXPRESSION_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
  /** Hard wall-clock limit of one expression: past it the evaluator process is killed (and replaced). */
  EXPRESSION_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(2000),
  /** Heap limit of each evaluator process; an expression that needs more kills only its evaluator. */
  EXPRESSION_MEMORY_MB: z.coerce.number().int().min(32).max(4096).default(128),
  /** How long an expression may wait for a free evaluator before the step fails (retryably). */
  EXPRESSION_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),

  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .default('smtp://127.0.0.1:1025'),
  SMTP_FROM: z.string().min(3).default('Stepwise <stepwise@localhost>'),
  /** Hosts (host or host:port) that http_request / http_fetch may reach even though they resolve to private addresses. */
  HTTP_ALLOWED_HOSTS: csv
    .pipe(
      z.array(z.string()).superRefine((entries, ctx) => {
        for (const entry of entries) {
          const parsed = parseHostEntry(entry);
          if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
        }
      }),
    )
    .default([]),
  /**
   * Completion webhooks (docs/webhooks.md): Temporal retries a delivery after this many seconds, doubling up to
   * 10 minutes, for at most WEBHOOK_MAX_ATTEMPTS attempts. Read by the worker when a delivery starts.
   */
  WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().min(0.01).max(3600).default(5),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(10),
  /** Inbound webhooks (POST /api/v1/hooks/:hookId): deliveries per hook per minute, and hooks per workflow. */
  HOOK_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  HOOKS_MAX_PER_WORKFLOW: z.coerce.number().int().positive().max(1000).default(10),
  /**
   * Schedules (Temporal Schedules, POST /api/v1/workflows/:id/schedules): how many one user may have, and the
   * shortest gap between two fires an interval or cron spec may ask for (each fire is a run), jitter not counted.
   */
  SCHEDULES_MAX_PER_USER: z.coerce.number().int().positive().max(10000).default(20),
  /** MCP servers one user may register (POST /api/v1/mcp-servers; docs/mcp.md). */
  MCP_SERVERS_MAX_PER_USER: z.coerce.number().int().positive().max(10000).default(50),
  /**
   * Local stdio MCP servers the operator declares, by name (docs/mcp.md "stdio servers", decision 0420): a JSON
   * object `{"<name>": {"command": …, "args": […], "env": {…}, "allowed_tools": […]}}`. Both processes read it: the
   * API accepts only these names in `mcp_tools`, the worker launches them. Empty (the default): the feature is off.
   */
  MCP_STDIO_SERVERS: z
    .string()
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object: {"<name>": {"command": "…"}}' });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(z.string().regex(MCP_STDIO_NAME), mcpStdioServer, {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'server names: letters, digits, "_" or "-", 1–32, starting with a letter or digit'
            : undefined,
      }),
    )
    .default({}),
  SCHEDULE_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86400).default(60),

  LLM_DEFAULT_MODEL: z
    .string()
    .regex(/^(openai|anthropic|compat):.+$/, 'provider:model')
    .default('openai:gpt-4o-mini'),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  LLM_BASE_URL: z.url().optional(),
  LLM_API_KEY: z.string().optional(),

  /**
   * CLI only (`runs …`, `approvals …`): the API the user commands talk to and the key they act with. Unset URL:
   * http://127.0.0.1:<API_PORT>, the local API. The flags --url / --api-key win over these.
   */
  STEPWISE_URL: z.url().optional(),
  STEPWISE_API_KEY: z.string().min(1).optional(),

  /** Dev stack only (npm run dev): ports of the servers it starts when none is configured. */
  DEV_TEMPORAL_PORT: port.default(7233),
  DEV_TEMPORAL_UI_PORT: port.default(8233),
  DEV_MONGODB_PORT: port.default(27017),
  DEV_CREATE_DEMO_USER: bool.default(true),
  /**
   * Dev stack only: where it looks for a local OpenAI-compatible server (`GET <url>/models`) when no model provider is
   * configured: Ollama, llama.cpp's server, vLLM on their usual ports (devstack/local-llm.ts). Empty: no probe.
   */
  DEV_LOCAL_LLM_URLS: csv
    .pipe(z.array(z.url()))
    .default(['http://127.0.0.1:11434/v1', 'http://127.0.0.1:8080/v1', 'http://127.0.0.1:8000/v1']),
  /** Dev stack only: folder for its databases (data/), logs (logs/) and the demo key; default .stepwise in the repo. */
  DEV_STATE_DIR: z.string().min(1).optional(),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment (process.env by default). Throws ConfigError listing every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" (compose files and shells often export VAR= ).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  // Refusing beats warning: a production stack that silently writes tenants' data in clear into Temporal's history
  // would stay that way for every run it keeps.
  if (parsed.data.NODE_ENV === 'production' && parsed.data.PAYLOAD_CODEC_KEYS.length === 0) {
    throw new ConfigError([
      'PAYLOAD_CODEC_KEYS: required in production (payloads would sit in Temporal in clear); e.g. PAYLOAD_CODEC_KEYS=k1:$(openssl rand -base64 32)',
    ]);
  }
  return parsed.data;
}

/** Which variables the user set explicitly (the dev stack starts nothing for a service whose address is given). */
export function isSet(name: keyof Config, env: NodeJS.ProcessEnv = process.env): boolean {
  return typeof env[name] === 'string' && env[name] !== '';
}

/** Exits with the problem list: the behaviour every entrypoint wants for a bad configuration. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/**
 * The process environment as the CLI reads variables a definition file names for its secrets (`mcp-servers apply`:
 * `auth.token_env`). Those names are the user's, not settings of this service, so they are not in the schema above.
 */
export function processEnvironment(): Readonly<Record<string, string | undefined>> {
  return process.env;
}
