/**
 * The one place that reads process.env. Every entrypoint calls loadConfig() once and passes the typed result down;
 * a bad value stops the process with every problem listed (see README "Configuration").
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

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
  /**
   * Spending limits (docs/runs.md "Budgets"). The run limits are the default and the ceiling of a workflow's
   * `config.budget`; the run snapshot carries the effective values, so a change here never alters a run in flight.
   */
  RUN_MAX_TOKENS: z.coerce.number().int().positive().default(1_000_000),
  RUN_MAX_MODEL_CALLS: z.coerce.number().int().positive().default(200),
  USER_MAX_CONCURRENT_RUNS: z.coerce.number().int().positive().default(50),
  USER_MAX_TOKENS_PER_DAY: z.coerce.number().int().positive().default(10_000_000),

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
  /** A prebuilt workflow bundle (npm run build:workflows); without it the worker bundles once and caches. */
  WORKFLOW_BUNDLE_PATH: z.string().optional(),
  /** A non-terminal run whose projection has not changed for this long is checked against Temporal on a status read. */
  RUN_STATUS_CHECK_AFTER_SECONDS: z.coerce.number().int().min(1).default(10),
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).default(10),
  WORKER_HEALTH_PORT: port.optional(),

  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .default('smtp://127.0.0.1:1025'),
  SMTP_FROM: z.string().min(3).default('Stepwise <stepwise@localhost>'),
  /** Hosts (host or host:port) that http_request / http_fetch may reach even though they resolve to private addresses. */
  HTTP_ALLOWED_HOSTS: csv.default([]),

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

  /** Dev stack only (npm run dev): ports of the servers it starts when none is configured. */
  DEV_TEMPORAL_PORT: port.default(7233),
  DEV_TEMPORAL_UI_PORT: port.default(8233),
  DEV_MONGODB_PORT: port.default(27017),
  DEV_CREATE_DEMO_USER: bool.default(true),
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
