/**
 * The workflow bundle's cache key (temporal/bundle.ts) covers everything the bundle's content depends on, so a changed
 * SDK, lockfile or bundler option builds a new bundle instead of reusing a stale one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleDigest, readBundleInputs, type BundleInputs } from '../../temporal/bundle';
import { repoRoot } from '../helpers/run-node';

const base: BundleInputs = {
  sources: [
    { path: '/repo/temporal/workflows/run.ts', content: 'export async function run() {}' },
    { path: '/repo/domain/index.ts', content: 'export {};' },
  ],
  sdkVersions: { '@temporalio/worker': '1.24.0', '@temporalio/workflow': '1.24.0' },
  lockfile: '{"lockfileVersion":3,"packages":{"node_modules/@temporalio/common":{"version":"1.24.0"}}}',
  options: {
    workflowsPath: '/repo/temporal/workflows/index.ts',
    failureConverterPath: '/repo/domain/failure-converter.ts',
    workflowInterceptorModules: ['/repo/temporal/workflows/interceptors/tracing.ts'],
  },
};

describe('the workflow bundle digest', () => {
  it('is the same for the same inputs', () => {
    expect(bundleDigest(structuredClone(base))).toBe(bundleDigest(base));
  });

  it.each<[string, Partial<BundleInputs>]>([
    ['a workflow source', { sources: [{ ...base.sources[0]!, content: 'export async function run() { }' }] }],
    ['the lockfile', { lockfile: base.lockfile.toString().replace('"1.24.0"}}', '"1.24.1"}}') }],
    ['the bundling SDK', { sdkVersions: { ...base.sdkVersions, '@temporalio/worker': '1.25.0' } }],
    ['the workflow SDK', { sdkVersions: { ...base.sdkVersions, '@temporalio/workflow': '1.25.0' } }],
    ['the interceptor modules', { options: { ...base.options, workflowInterceptorModules: [] } }],
    ['the failure converter', { options: { ...base.options, failureConverterPath: '/repo/other-converter.ts' } }],
    ['the workflows path', { options: { ...base.options, workflowsPath: '/repo/temporal/workflows/other.ts' } }],
  ])('changes with %s', (_what, change) => {
    expect(bundleDigest({ ...base, ...change })).not.toBe(bundleDigest(base));
  });

  it("reads this checkout's installed SDK versions and lockfile", () => {
    const inputs = readBundleInputs();
    for (const name of ['@temporalio/worker', '@temporalio/workflow']) {
      const manifest = JSON.parse(
        fs.readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'),
      ) as { version: string };
      expect(inputs.sdkVersions[name]).toBe(manifest.version);
    }
    expect(inputs.lockfile.toString()).toBe(fs.readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8'));
    const sources = inputs.sources.map((s) => path.relative(repoRoot, s.path));
    expect(sources).toContain('temporal/workflows/run.ts');
    expect(sources).toContain('domain/run.ts');
  });
});
