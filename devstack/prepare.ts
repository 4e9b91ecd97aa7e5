/**
 * Runs before the test suite (`npm test`): installs or finds the Temporal CLI, the MongoDB server, Schemathesis,
 * chromium and promtool and builds the workflow bundle and the web console, printing each step, so the suite itself
 * starts with everything cached.
 */
import { ensureWorkflowBundle } from '../temporal/bundle';
import { ensureChromium } from './chromium';
import { ensureConsoleBuild } from './console-build';
import { ensureMongoServer, ensureSchemathesis, ensureTemporalCli } from './install';
import { ensurePromtool } from './promtool';

const log = (message: string) => process.stdout.write(`[prepare] ${message}\n`);

async function main(): Promise<void> {
  const temporal = ensureTemporalCli(log);
  log(`temporal CLI: ${temporal}`);
  const mongo = ensureMongoServer(log);
  log(`mongodb server: ${mongo.kind === 'mongod' ? mongo.path : 'embedded wire server (mongo-java-server)'}`);
  const bundle = await ensureWorkflowBundle();
  log(`workflow bundle: ${bundle}`);
  log(`console: ${ensureConsoleBuild(log)}`);
  log(`schemathesis: ${ensureSchemathesis(log)}`);
  // The console's browser tests fail with this message when there is no browser; the rest of the suite runs.
  const chromium = ensureChromium(log);
  log('path' in chromium ? `chromium: ${chromium.path}` : `chromium: ${chromium.problem}`);
  // Likewise the Prometheus config test without promtool.
  const promtool = ensurePromtool(log);
  log('path' in promtool ? `promtool: ${promtool.path}` : `promtool: ${promtool.problem}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`[prepare] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
