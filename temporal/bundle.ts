/**
 * The workflow bundle is built once and cached under a digest of everything its output depends on, so a worker start
 * (and every test file) reuses it instead of running webpack again, and nothing else does: the sandboxed sources, the
 * SDK that bundles and runs them, every other locked package webpack may pull in, and the bundler options.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../shared/codec/data-converter';

const workerDir = __dirname;
/** Everything the workflow sandbox may import (see the lint boundary on temporal/workflows): its code and the domain. */
const SANDBOX_SOURCES = ['workflows', '../domain'];
export const DEFAULT_BUNDLE_DIR = path.resolve(workerDir, '..', '.stepwise', 'cache');
const LOCKFILE = path.resolve(workerDir, '..', 'package-lock.json');

/** The bundler options that change the bundle's output (absolute paths: the bundle embeds them). */
export interface BundleOptions {
  workflowsPath: string;
  failureConverterPath: string;
  workflowInterceptorModules: string[];
}

/** Everything a bundle's content depends on; `bundleDigest` hashes exactly this. */
export interface BundleInputs {
  /** The sandboxed sources: absolute path and content. */
  sources: { path: string; content: Buffer | string }[];
  /** Installed versions of the packages that bundle (`@temporalio/worker`) and run in (`@temporalio/workflow`) it. */
  sdkVersions: Record<string, string>;
  /** package-lock.json: any other package in the bundle (`@temporalio/common`, …) changes only with it. */
  lockfile: Buffer | string;
  options: BundleOptions;
}

const BUNDLE_OPTIONS: BundleOptions = {
  workflowsPath: require.resolve('./workflows'),
  // The same failure converter as the worker's and the client's (see domain/failure-converter.ts).
  failureConverterPath: FAILURE_CONVERTER_PATH,
  // Always in the bundle (one bundle whatever the config); inert for executions started without a trace context.
  workflowInterceptorModules: [require.resolve('./workflows/interceptors/tracing')],
};

/** The installed version of a package, from its own package.json as Node resolves it from here. */
function installedVersion(name: string): string {
  const manifest = JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string };
  return manifest.version;
}

/** Reads this checkout's bundle inputs: sources, installed SDK versions, lockfile. */
export function readBundleInputs(): BundleInputs {
  const sources: BundleInputs['sources'] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) sources.push({ path: full, content: fs.readFileSync(full) });
    }
  };
  for (const dir of SANDBOX_SOURCES) walk(path.join(workerDir, dir));
  return {
    sources,
    sdkVersions: Object.fromEntries(
      ['@temporalio/worker', '@temporalio/workflow'].map((name) => [name, installedVersion(name)]),
    ),
    lockfile: fs.readFileSync(LOCKFILE),
    options: BUNDLE_OPTIONS,
  };
}

/** A short digest of the inputs; pure, so that a test can show what changes the bundle's name. */
export function bundleDigest(inputs: BundleInputs): string {
  const sha256 = (content: Buffer | string) => createHash('sha256').update(content).digest('hex');
  // One JSON document of fixed shape, contents as their hashes: no two different inputs hash the same bytes.
  const canonical = JSON.stringify({
    sources: inputs.sources.map((source) => [source.path, sha256(source.content)]),
    sdkVersions: Object.entries(inputs.sdkVersions).sort(([a], [b]) => a.localeCompare(b)),
    lockfile: sha256(inputs.lockfile),
    options: [
      inputs.options.workflowsPath,
      inputs.options.failureConverterPath,
      inputs.options.workflowInterceptorModules,
    ],
  });
  return sha256(canonical).slice(0, 16);
}

/** Path of an up-to-date bundle, building it if any of its inputs changed since the last build. */
export async function ensureWorkflowBundle(bundleDir = DEFAULT_BUNDLE_DIR): Promise<string> {
  const file = path.join(bundleDir, `workflow-bundle-${bundleDigest(readBundleInputs())}.js`);
  if (fs.existsSync(file)) return file;
  const { code } = await bundleWorkflowCode({
    ...BUNDLE_OPTIONS,
    logger: new DefaultLogger('WARN'),
  });
  fs.mkdirSync(bundleDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, file); // atomic: a concurrent reader never sees half a bundle
  return file;
}
