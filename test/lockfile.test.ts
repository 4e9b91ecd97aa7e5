/**
 * `npm ci` refuses a lockfile that lacks any platform's optional package ("not in sync"), so CI, the Dockerfile and a
 * fresh clone would all fail; `npm run lock` keeps it complete (devstack/lockfile.ts). This catches a lockfile written
 * by a plain `npm install` against a registry that serves only some platforms' builds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { missingOptionalEntries, platformOf, type Lockfile } from '../devstack/lockfile-check';
import { repoRoot } from './helpers/run-node';

const lock = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile;

describe('package-lock.json', () => {
  it("has an entry for every locked package's optional dependencies, on every platform", () => {
    expect(missingOptionalEntries(lock).map((m) => `${m.parent} → ${m.name}@${m.version}`)).toEqual([]);
  });

  it('locks the platform builds of @swc/core for macOS, Linux and Windows', () => {
    for (const name of ['@swc/core-darwin-arm64', '@swc/core-linux-x64-gnu', '@swc/core-win32-x64-msvc']) {
      expect(lock.packages[`node_modules/${name}`]?.optional).toBe(true);
    }
  });

  it('notices a missing platform entry', () => {
    const broken: Lockfile = {
      packages: {
        '': {},
        'node_modules/a': {
          version: '1.0.0',
          optionalDependencies: { 'a-linux-x64': '1.0.0', 'a-darwin-arm64': '1.0.0' },
        },
        'node_modules/a-linux-x64': { version: '1.0.0', optional: true },
      },
    };
    expect(missingOptionalEntries(broken)).toEqual([
      { parent: 'node_modules/a', name: 'a-darwin-arm64', version: '1.0.0' },
    ]);
  });

  it("reads a platform package's os, cpu and libc from its name", () => {
    expect(platformOf('@swc/core-linux-arm64-musl')).toEqual({ os: ['linux'], cpu: ['arm64'], libc: ['musl'] });
    expect(platformOf('@unrs/resolver-binding-linux-arm-gnueabihf')).toEqual({
      os: ['linux'],
      cpu: ['arm'],
      libc: ['glibc'],
    });
    expect(platformOf('@swc/core-win32-ia32-msvc')).toEqual({ os: ['win32'], cpu: ['ia32'] });
  });
});
