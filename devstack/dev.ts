/**
 * `npm run dev`: one command from a fresh clone to a running stack. Starts (or reuses, when TEMPORAL_ADDRESS /
 * MONGODB_URI are set) Temporal and MongoDB, then the worker and the API; with no model provider configured, runs
 * agents on a local OpenAI-compatible server when one answers on its usual port (./local-llm.ts); prints the URLs,
 * the model setup and the CLI's export lines once every part answers (./banner.ts); then warns about MCP servers
 * agents would get no tools from (./mcp-watch.ts).
 * Ctrl-C (or SIGTERM/SIGHUP) stops every process it started; a second Ctrl-C kills them at once.
 */
import path from 'node:path';
import { isSet, loadConfigOrExit, type Config } from '../config';
import { connectDatabase } from '../db/client';
import { ensureWorkflowBundle } from '../temporal/bundle';
import { ensureConsoleBuild } from './console-build';
import { configuredProviders } from '../shared/llm-providers';
import { bannerLines } from './banner';
import { ensureCodecSecrets } from './codec-secrets';
import { ensureDemoKey, DEMO_USER_NAME } from './demo-user';
import { resolveModelSetup } from './local-llm';
import { watchMcpServers } from './mcp-watch';
import { devStatePaths } from './paths';
import { assertPortsFree, type PortClaim } from './ports';
import { freePort, startProcess, waitFor, type Managed } from './process';
import { startMongo, startTemporal } from './servers';
import { Supervisor } from './supervisor';

const log = (message: string) => process.stdout.write(`[stepwise] ${message}\n`);
/** How long each part gets to drain on Ctrl-C before SIGKILL (the worker's own grace time is shorter). */
const STOP_GRACE_MS = 15_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const paths = devStatePaths(config.DEV_STATE_DIR);
  const supervisor = new Supervisor();

  const shutdown = async (code: number) => {
    if (supervisor.isStopping) {
      log('stopping now (killing every process)');
      supervisor.killAll();
      process.exit(code || 130);
    }
    const anything = supervisor.count > 0;
    if (anything) log('stopping… (Ctrl-C again to kill at once)');
    await supervisor.stopAll(STOP_GRACE_MS);
    // Belt and braces: anything spawned while the stop ran is killed before we go.
    supervisor.killAll();
    if (anything) log('stopped');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(0));
  process.on('uncaughtException', (err) => {
    log(`crashed: ${err.stack ?? err.message}`);
    supervisor.killAll();
    process.exit(1);
  });
  /** Registers a process and stops the whole stack if it dies on its own. */
  const track = (proc: Managed) => {
    supervisor.track(proc);
    void proc.exited.then((code) => {
      if (supervisor.isStopping) return;
      log(`${proc.name} exited unexpectedly (code ${code}); see ${proc.logFile}`);
      void shutdown(1);
    });
  };

  try {
    const startTemporalHere = !isSet('TEMPORAL_ADDRESS');
    const startMongoHere = !isSet('MONGODB_URI');
    await assertPortsFree(portClaims(config, startTemporalHere, startMongoHere));

    const env: NodeJS.ProcessEnv = { ...process.env };
    // Runs are encrypted in Temporal in development too, with a key kept in the state folder; the Web UI reads them
    // through the API's codec endpoint, whose token is in the UI's codec URL.
    const secrets = ensureCodecSecrets(paths.codecSecretsFile, {
      keys: isSet('PAYLOAD_CODEC_KEYS') ? process.env.PAYLOAD_CODEC_KEYS : undefined,
      token: isSet('CODEC_ACCESS_TOKEN') ? process.env.CODEC_ACCESS_TOKEN : undefined,
    });
    env.PAYLOAD_CODEC_KEYS = secrets.keys;
    env.CODEC_ACCESS_TOKEN = secrets.token;
    const localhost = config.API_HOST === '0.0.0.0' ? '127.0.0.1' : config.API_HOST;
    const apiUrl = `http://${localhost}:${config.API_PORT}`;
    const logs = ['api', 'worker'];
    let temporalUi = config.TEMPORAL_UI_URL;
    if (!startTemporalHere) {
      log(`temporal: using TEMPORAL_ADDRESS=${config.TEMPORAL_ADDRESS}`);
    } else {
      const temporal = await startTemporal(
        {
          port: config.DEV_TEMPORAL_PORT,
          uiPort: config.DEV_TEMPORAL_UI_PORT,
          dbFile: path.join(paths.dataDir, 'temporal.db'),
          logFile: path.join(paths.logsDir, 'temporal.log'),
          uiCodecEndpoint: `${apiUrl}/codec/${secrets.token}`,
          onSpawn: track,
        },
        log,
      );
      env.TEMPORAL_ADDRESS = temporal.address;
      env.TEMPORAL_UI_URL = temporalUi = temporal.uiUrl;
      logs.push('temporal');
      log(`temporal: server up at ${temporal.address} (pid ${temporal.process.pid})`);
    }
    if (!startMongoHere) {
      log('mongodb: using MONGODB_URI');
    } else {
      const mongo = await startMongo(
        {
          port: config.DEV_MONGODB_PORT,
          dataDir: path.join(paths.dataDir, 'mongodb'),
          logFile: path.join(paths.logsDir, 'mongodb.log'),
          onSpawn: track,
        },
        log,
      );
      env.MONGODB_URI = mongo.uri;
      logs.push('mongodb');
      log(
        `mongodb: ${mongo.kind === 'java' ? 'embedded wire server' : 'mongod'} up at ${mongo.uri} (pid ${mongo.process.pid})`,
      );
    }

    // Before the API starts: it lists the console's files once, at start.
    ensureConsoleBuild(log);
    log('worker: preparing the workflow bundle');
    env.WORKFLOW_BUNDLE_PATH = config.WORKFLOW_BUNDLE_PATH ?? (await ensureWorkflowBundle());
    const workerHealthPort = config.WORKER_HEALTH_PORT ?? (await freePort());
    env.WORKER_HEALTH_PORT = String(workerHealthPort);
    // The Temporal SDK's worker metrics are on in development, on a free port the banner prints.
    const workerSdkMetricsPort = config.WORKER_TEMPORAL_METRICS_PORT ?? (await freePort());
    env.WORKER_TEMPORAL_METRICS_PORT = String(workerSdkMetricsPort);
    const models = await resolveModelSetup(
      config,
      configuredProviders(config),
      isSet('LLM_DEFAULT_MODEL'),
      config.DEV_LOCAL_LLM_URLS,
    );
    if (models.kind === 'local') {
      Object.assign(env, models.env);
      log(`models: no provider configured; using the local server at ${models.server.baseUrl}`);
    }
    if (supervisor.isStopping) return;

    const tsx = (file: string) => ['--import', 'tsx', path.resolve(__dirname, '..', file)];
    for (const [name, file] of [
      ['worker', 'temporal/main.ts'],
      ['api', 'api/server.ts'],
    ] as const) {
      track(
        startProcess({
          name,
          command: process.execPath,
          args: tsx(file),
          env,
          logFile: path.join(paths.logsDir, `${name}.log`),
        }),
      );
    }

    for (const [what, url] of [
      ['the API', `${apiUrl}/readyz`],
      ['the worker', `http://127.0.0.1:${workerHealthPort}/readyz`],
    ] as const) {
      await waitFor(`${what} to be ready`, () => supervisor.isStopping || httpOk(url), {
        timeoutMs: 90_000,
        intervalMs: 250,
      });
    }
    if (supervisor.isStopping) return;

    let demo: { key: string; created: boolean } | undefined;
    if (config.DEV_CREATE_DEMO_USER) {
      const database = await connectDatabase({ uri: env.MONGODB_URI ?? config.MONGODB_URI, dbName: config.MONGODB_DB });
      try {
        demo = await ensureDemoKey(database.db, paths.demoKeyFile);
      } finally {
        await database.close();
      }
    }

    const lines = bannerLines({
      apiUrl,
      temporalUi,
      startedTemporal: startTemporalHere,
      workerHealthUrl: `http://${localhost}:${workerHealthPort}`,
      workerSdkMetricsUrl: `http://${localhost}:${workerSdkMetricsPort}/metrics`,
      models,
      codecSecretsFile: displayPath(paths.codecSecretsFile),
      mongoUri: startMongoHere ? env.MONGODB_URI : undefined,
      mongoDb: config.MONGODB_DB,
      demo: demo && { ...demo, user: DEMO_USER_NAME, file: displayPath(paths.demoKeyFile) },
      logs: `${displayPath(paths.logsDir)}/{${logs.join(',')}}.log`,
    });
    for (const line of lines) log(line);

    // Open until the process exits: the warnings about MCP servers agents would get no tools from.
    const watched = await connectDatabase({ uri: env.MONGODB_URI ?? config.MONGODB_URI, dbName: config.MONGODB_DB });
    watchMcpServers(watched.db, config.HTTP_ALLOWED_HOSTS, log);
  } catch (err) {
    if (supervisor.isStopping) return;
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    await shutdown(1);
  }
}

/** The ports this start would bind, each with the setting that moves it (0 means "any free port": nothing to check). */
function portClaims(config: Config, temporal: boolean, mongo: boolean): PortClaim[] {
  const claims: PortClaim[] = [{ port: config.API_PORT, setting: 'API_PORT', what: 'the API', host: config.API_HOST }];
  if (config.WORKER_HEALTH_PORT !== undefined) {
    claims.push({
      port: config.WORKER_HEALTH_PORT,
      setting: 'WORKER_HEALTH_PORT',
      what: "the worker's health endpoint",
      host: config.API_HOST,
    });
  }
  if (config.WORKER_TEMPORAL_METRICS_PORT !== undefined) {
    claims.push({
      port: config.WORKER_TEMPORAL_METRICS_PORT,
      setting: 'WORKER_TEMPORAL_METRICS_PORT',
      what: "the worker's Temporal SDK metrics",
      host: config.API_HOST,
    });
  }
  if (temporal) {
    claims.push({ port: config.DEV_TEMPORAL_PORT, setting: 'DEV_TEMPORAL_PORT', what: 'Temporal' });
    claims.push({ port: config.DEV_TEMPORAL_UI_PORT, setting: 'DEV_TEMPORAL_UI_PORT', what: 'the Temporal Web UI' });
  }
  if (mongo) claims.push({ port: config.DEV_MONGODB_PORT, setting: 'DEV_MONGODB_PORT', what: 'MongoDB' });
  return claims.filter((c) => c.port !== 0);
}

function displayPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith('..') ? rel : p;
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

void main();
