/**
 * The workflow bundle is built once and cached by the content hash of the sandboxed sources, so a worker start
 * (and every test file) reuses it instead of running webpack again.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from './codec/data-converter';

const temporalDir = __dirname;
/** Everything the workflow sandbox may import (see the lint boundary on temporal/workflows). */
const SANDBOX_SOURCES = ['workflows', 'contract'];
export const DEFAULT_BUNDLE_DIR = path.resolve(temporalDir, '..', '.stepwise', 'cache');

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) hash.update(full).update(fs.readFileSync(full));
    }
  };
  for (const dir of SANDBOX_SOURCES) walk(path.join(temporalDir, dir));
  return hash.digest('hex').slice(0, 16);
}

/** Path of an up-to-date bundle, building it if the sources changed since the last build. */
export async function ensureWorkflowBundle(bundleDir = DEFAULT_BUNDLE_DIR): Promise<string> {
  const file = path.join(bundleDir, `workflow-bundle-${sourcesDigest()}.js`);
  if (fs.existsSync(file)) return file;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    // The same failure converter as the worker's and the client's (see contract/failure-converter.ts).
    failureConverterPath: FAILURE_CONVERTER_PATH,
    // Always in the bundle (one bundle whatever the config); inert for executions started without a trace context.
    workflowInterceptorModules: [require.resolve('./workflows/interceptors/tracing')],
    logger: new DefaultLogger('WARN'),
  });
  fs.mkdirSync(bundleDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, file); // atomic: a concurrent reader never sees half a bundle
  return file;
}
