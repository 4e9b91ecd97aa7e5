/**
 * Runs before the test suite (`npm test`): installs or finds the Temporal CLI and the MongoDB server and builds the
 * workflow bundle, printing each step, so the suite itself starts with everything cached.
 */
import { ensureWorkflowBundle } from '../temporal/bundle';
import { ensureMongoServer, ensureTemporalCli } from './install';

const log = (message: string) => process.stdout.write(`[prepare] ${message}\n`);

async function main(): Promise<void> {
  const temporal = ensureTemporalCli(log);
  log(`temporal CLI: ${temporal}`);
  const mongo = ensureMongoServer(log);
  log(`mongodb server: ${mongo.kind === 'mongod' ? mongo.path : 'embedded wire server (mongo-java-server)'}`);
  const bundle = await ensureWorkflowBundle();
  log(`workflow bundle: ${bundle}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`[prepare] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
