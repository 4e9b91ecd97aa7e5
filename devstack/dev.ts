/**
 * `npm run dev`: one command from a fresh clone to a running stack. Starts (or reuses, when TEMPORAL_ADDRESS /
 * MONGODB_URI are set) Temporal and MongoDB, then the worker and the API; prints the URLs once every part answers.
 * Ctrl-C stops every process it started.
 */
import path from 'node:path';
import { isSet, loadConfig, ConfigError, type Config } from '../config';
import { ensureWorkflowBundle } from '../temporal/bundle';
import { dataDir, logsDir, repoRoot } from './paths';
import { freePort, startProcess, waitFor, type Managed } from './process';
import { startMongo, startTemporal } from './servers';
import { createDemoUser } from './demo-user';

const log = (message: string) => process.stdout.write(`[stepwise] ${message}\n`);

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const started: Managed[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    // Reverse start order: API and worker drain before the servers they use go away.
    for (const proc of [...started].reverse()) await proc.stop(15_000);
    log('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    let temporalUi = config.TEMPORAL_UI_URL;
    if (isSet('TEMPORAL_ADDRESS')) {
      log(`temporal: using TEMPORAL_ADDRESS=${config.TEMPORAL_ADDRESS}`);
    } else {
      const temporal = await startTemporal(
        {
          port: config.DEV_TEMPORAL_PORT,
          uiPort: config.DEV_TEMPORAL_UI_PORT,
          dbFile: path.join(dataDir, 'temporal.db'),
          logFile: path.join(logsDir, 'temporal.log'),
        },
        log,
      );
      started.push(temporal.process);
      env.TEMPORAL_ADDRESS = temporal.address;
      env.TEMPORAL_UI_URL = temporalUi = temporal.uiUrl;
      log(`temporal: server up at ${temporal.address} (pid ${temporal.process.pid})`);
    }
    if (isSet('MONGODB_URI')) {
      log('mongodb: using MONGODB_URI');
    } else {
      const mongo = await startMongo(
        { port: config.DEV_MONGODB_PORT, dataDir: path.join(dataDir, 'mongodb'), logFile: path.join(logsDir, 'mongodb.log') },
        log,
      );
      started.push(mongo.process);
      env.MONGODB_URI = mongo.uri;
      log(`mongodb: ${mongo.kind === 'java' ? 'embedded wire server' : 'mongod'} up at ${mongo.uri} (pid ${mongo.process.pid})`);
    }

    log('worker: preparing the workflow bundle');
    env.WORKFLOW_BUNDLE_PATH = config.WORKFLOW_BUNDLE_PATH ?? (await ensureWorkflowBundle());
    const workerHealthPort = config.WORKER_HEALTH_PORT ?? (await freePort());
    env.WORKER_HEALTH_PORT = String(workerHealthPort);

    const tsx = (file: string) => [process.execPath, ['--import', 'tsx', path.join(repoRoot, file)]] as const;
    const [workerCmd, workerArgs] = tsx('temporal/worker.ts');
    const worker = startProcess({ name: 'worker', command: workerCmd, args: [...workerArgs], env, logFile: path.join(logsDir, 'worker.log') });
    started.push(worker);
    const [apiCmd, apiArgs] = tsx('api/server.ts');
    const api = startProcess({ name: 'api', command: apiCmd, args: [...apiArgs], env, logFile: path.join(logsDir, 'api.log') });
    started.push(api);
    for (const proc of [worker, api]) {
      void proc.exited.then((code) => {
        if (!stopping) {
          log(`${proc.name} exited unexpectedly (code ${code}); see ${proc.logFile}`);
          void stopAll(1);
        }
      });
    }

    const apiUrl = `http://${config.API_HOST === '0.0.0.0' ? '127.0.0.1' : config.API_HOST}:${config.API_PORT}`;
    await waitFor('the API to be ready', () => httpOk(`${apiUrl}/readyz`), { timeoutMs: 90_000, intervalMs: 250 });
    await waitFor('the worker to be ready', () => httpOk(`http://127.0.0.1:${workerHealthPort}/readyz`), { timeoutMs: 90_000, intervalMs: 250 });

    const demo = config.DEV_CREATE_DEMO_USER ? await createDemoUser(loadConfig(env)) : undefined;

    log('');
    log('Stepwise is running.');
    log(`  API              ${apiUrl}/api/v1`);
    log(`  API docs         ${apiUrl}/docs`);
    log(`  Temporal Web UI  ${temporalUi}`);
    if (demo) log(`  Demo API key     ${demo}`);
    log(`  Logs             ${path.relative(process.cwd(), logsDir) || logsDir}/{api,worker,temporal,mongodb}.log`);
    log('Press Ctrl-C to stop.');
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(1);
  }
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
