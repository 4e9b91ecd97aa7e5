/**
 * The console's static build (console/dist), made by `npm run dev` and the test set-up when its sources changed since
 * the last build: a digest of the sources and the lockfile is kept beside the output, so a second start skips Vite.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './paths';

const consoleDir = path.join(repoRoot, 'console');
export const consoleDist = path.join(consoleDir, 'dist');
const DIGEST_FILE = path.join(consoleDist, '.build-digest');

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const add = (file: string) => hash.update(path.relative(repoRoot, file)).update(fs.readFileSync(file));
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else add(full);
    }
  };
  walk(path.join(consoleDir, 'src'));
  for (const file of ['index.html', 'vite.config.mjs', 'tsconfig.json']) add(path.join(consoleDir, file));
  // The code outside console/ that the console bundles (not types): a change there changes the build too.
  for (const file of ['client/values.ts', 'domain/exec-id.ts']) add(path.join(repoRoot, file));
  add(path.join(repoRoot, 'package-lock.json'));
  return hash.digest('hex').slice(0, 16);
}

/** Builds the console unless the last build is of the same sources; returns the output folder. */
export function ensureConsoleBuild(log: (message: string) => void): string {
  const digest = sourcesDigest();
  const built = fs.existsSync(path.join(consoleDist, 'index.html')) && fs.existsSync(DIGEST_FILE);
  if (built && fs.readFileSync(DIGEST_FILE, 'utf8') === digest) return consoleDist;
  log('console: building (vite)');
  const vite = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(consoleDir, 'vite.config.mjs')], {
    cwd: repoRoot,
    encoding: 'utf8',
    // A production build whatever the caller's NODE_ENV (jest sets `test`, which would bundle React's dev build).
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) {
    throw new Error(`the console build failed:\n${result.stdout}\n${result.stderr}`);
  }
  fs.writeFileSync(DIGEST_FILE, digest);
  return consoleDist;
}
