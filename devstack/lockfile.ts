/**
 * `npm run lock`: refresh package-lock.json and make sure it names every platform's optional package, so `npm ci`
 * accepts it on any machine.
 *
 * Why this exists: npm writes a lockfile entry only for the optional packages it could resolve. A registry (or mirror)
 * that serves only some platforms' builds of `@swc/core` or `unrs-resolver` leaves the others out, and `npm ci`
 * everywhere then refuses the lockfile as "not in sync". Here each missing entry is added from the registry when it
 * has the package, and otherwise from what the package's name says (os, cpu, libc); such an entry has no integrity
 * hash, and is reported, so the next run on a registry that has the package fills it in.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './paths';
import { missingOptionalEntries, platformOf, type LockEntry, type Lockfile } from './lockfile-check';

// The project folder: this repo, or another copy of its package.json (to try a lockfile without touching this one).
const projectDir = path.resolve(process.argv[2] ?? repoRoot);
const lockPath = path.join(projectDir, 'package-lock.json');

function npm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('npm', args, { cwd: projectDir, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface RegistryManifest {
  dist?: { integrity?: string };
  os?: string[];
  cpu?: string[];
  libc?: string[];
  license?: string;
  engines?: Record<string, string>;
}

/** The registry's manifest of name@version, or undefined when this registry does not serve it. */
function manifest(name: string, version: string): RegistryManifest | undefined {
  const result = npm(['view', `${name}@${version}`, '--json']);
  if (result.status !== 0 || !result.stdout.trim()) return undefined;
  return JSON.parse(result.stdout) as RegistryManifest;
}

function entryFor(name: string, version: string, sibling: LockEntry | undefined): { entry: LockEntry; exact: boolean } {
  const found = manifest(name, version);
  const guessed = platformOf(name);
  const entry: LockEntry = { version };
  if (found?.dist?.integrity) entry.integrity = found.dist.integrity;
  const cpu = found?.cpu ?? guessed.cpu;
  if (cpu) entry.cpu = cpu;
  // Optional platform packages belong to the same dependency kind (dev or not) as their siblings.
  if (sibling?.dev) entry.dev = true;
  const libc = found?.libc ?? guessed.libc;
  if (libc) entry.libc = libc;
  const license = found?.license ?? sibling?.license;
  if (license) entry.license = license;
  entry.optional = true;
  const os = found?.os ?? guessed.os;
  if (os) entry.os = os;
  const engines = found?.engines ?? sibling?.engines;
  if (engines) entry.engines = engines;
  return { entry, exact: Boolean(found) };
}

function main(): void {
  const refresh = npm(['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund']);
  if (refresh.status !== 0) {
    process.stderr.write(refresh.stderr);
    throw new Error('npm install --package-lock-only failed');
  }
  const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Lockfile;
  const missing = missingOptionalEntries(lock);
  const guessedOnly: string[] = [];
  for (const { parent, name, version } of missing) {
    const siblings = Object.keys(lock.packages[parent]?.optionalDependencies ?? {});
    const sibling = siblings.map((other) => lock.packages[`node_modules/${other}`]).find(Boolean);
    const { entry, exact } = entryFor(name, version, sibling);
    lock.packages[`node_modules/${name}`] = entry;
    if (!exact) guessedOnly.push(`${name}@${version}`);
  }
  // npm keeps the packages in this order; keeping it makes the next `npm install` a no-op diff.
  // The root project's entry ("") stays first.
  const keys = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')));
  lock.packages = Object.fromEntries(keys.map((key) => [key, lock.packages[key]!]));
  fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);

  console.log(`lock: added ${missing.length} missing optional platform entries`);
  if (guessedOnly.length > 0) {
    console.log(
      `lock: this registry does not serve ${guessedOnly.length} of them; their entries come from the package name ` +
        `and have no integrity hash until \`npm run lock\` runs against a registry that has them:\n  ` +
        guessedOnly.join('\n  '),
    );
  }
  const check = npm(['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund']);
  if (check.status !== 0) {
    process.stderr.write(check.stderr);
    throw new Error('npm ci --dry-run still rejects the lockfile');
  }
  console.log('lock: npm ci accepts package-lock.json');
}

main();
