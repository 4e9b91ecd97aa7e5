/**
 * `promtool`, Prometheus's own checker of its configuration and rules, for test/observability/ops-config.test.ts:
 * on PATH, else Debian's `prometheus` package (which ships it) installed with apt-get when that is possible here
 * (root, apt-get present), as for chromium; otherwise the test fails with the command to run.
 */
import { ensureAptTool, which, type Log } from './install';

export const PROMTOOL_INSTALL_COMMAND = 'apt-get update && apt-get install -y --no-install-recommends prometheus';

/** Finds promtool, installing it with apt-get when possible; returns its path or why not. */
export function ensurePromtool(log: Log): { path: string } | { problem: string } {
  return ensureAptTool(
    {
      name: 'promtool',
      find: () => which('promtool'),
      // The package's service is never started here (no init system); only its promtool binary is used.
      install: ['--no-install-recommends', 'prometheus'],
      fix: PROMTOOL_INSTALL_COMMAND,
      installing: 'promtool: installing Debian prometheus with apt-get (once)',
    },
    log,
  );
}
