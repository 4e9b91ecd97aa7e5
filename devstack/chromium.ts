/**
 * The browser of the console tests: Debian's `chromium`, never one downloaded by a package at install time. The test
 * set-up installs it with apt-get when it is missing and it may (root, apt-get present); otherwise the tests fail
 * with the command to run.
 */
import fs from 'node:fs';
import { ensureAptTool, type Log } from './install';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];
export const INSTALL_COMMAND = 'apt-get update && apt-get install -y chromium';

/** CHROMIUM_PATH, or Debian's chromium where it installs; undefined when there is none. */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fs.existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => fs.existsSync(p));
}

/** Finds chromium, installing it with apt-get when that is possible here; returns its path or why not. */
export function ensureChromium(log: Log): { path: string } | { problem: string } {
  return ensureAptTool(
    {
      name: 'chromium',
      find: findChromium,
      install: ['chromium'],
      fix: INSTALL_COMMAND,
      installing: 'chromium: installing with apt-get (once)',
    },
    log,
  );
}
