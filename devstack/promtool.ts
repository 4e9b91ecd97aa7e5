/**
 * `promtool`, Prometheus's own checker of its configuration and rules, for test/observability/ops-config.test.ts:
 * on PATH, else Debian's `prometheus` package (which ships it) installed with apt-get when that is possible here
 * (root, apt-get present), as for chromium; otherwise the test fails with the command to run.
 */
import { spawnSync } from 'node:child_process';
import { which } from './install';

export const PROMTOOL_INSTALL_COMMAND = 'apt-get update && apt-get install -y --no-install-recommends prometheus';

/** Finds promtool, installing it with apt-get when possible; returns its path or why not. */
export function ensurePromtool(log: (message: string) => void): { path: string } | { problem: string } {
  const found = which('promtool');
  if (found) return { path: found };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version']).status === 0;
  if (!isRoot || !hasApt) return { problem: `promtool is not installed; run: sudo ${PROMTOOL_INSTALL_COMMAND}` };
  log('promtool: installing Debian prometheus with apt-get (once)');
  // The package's service is never started here (no init system); only its promtool binary is used.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'prometheus'],
  ]) {
    const res = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    if (res.status !== 0) return { problem: `apt-get ${args.join(' ')} failed: ${res.stderr.slice(-500)}` };
  }
  const installed = which('promtool');
  return installed ? { path: installed } : { problem: `promtool is not installed; run: ${PROMTOOL_INSTALL_COMMAND}` };
}
