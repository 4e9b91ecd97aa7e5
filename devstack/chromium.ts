/**
 * The browser of the console tests: Debian's `chromium`, never one downloaded by a package at install time. The test
 * set-up installs it with apt-get when it is missing and it may (root, apt-get present); otherwise the tests fail
 * with the command to run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];
export const INSTALL_COMMAND = 'apt-get update && apt-get install -y chromium';

/** CHROMIUM_PATH, or Debian's chromium where it installs; undefined when there is none. */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fs.existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => fs.existsSync(p));
}

/** Finds chromium, installing it with apt-get when that is possible here; returns its path or why not. */
export function ensureChromium(log: (message: string) => void): { path: string } | { problem: string } {
  const found = findChromium();
  if (found) return { path: found };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version']).status === 0;
  if (!isRoot || !hasApt) return { problem: `chromium is not installed; run: sudo ${INSTALL_COMMAND}` };
  log('chromium: installing with apt-get (once)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'chromium'],
  ]) {
    const res = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (res.status !== 0) return { problem: `apt-get ${args.join(' ')} failed: ${res.stderr.slice(-500)}` };
  }
  const installed = findChromium();
  return installed ? { path: installed } : { problem: `chromium is not installed; run: ${INSTALL_COMMAND}` };
}
