/**
 * `npm run dev` as a child process for tests: its own process group (as a shell job: SIGINT to the group is what
 * Ctrl-C sends), its output collected, the processes it started recorded once it runs so a test can prove none
 * survives, and a last-resort kill of whatever is left.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../../devstack/process';
import { processTree, survivors, type ProcInfo } from './proc-tree';
import { repoRoot } from './run-node';

export interface DevRun {
  pid: number;
  output(): string;
  exited: Promise<number | null>;
  /** Every process of the stack seen so far (the dev process, its children and theirs). */
  seen: ProcInfo[];
  /** The stack's log folder: its tails go into the error when the stack stops on its own. */
  logsDir?: string;
}

/** Starts `devstack/dev.ts` with only PATH, HOME, LOG_LEVEL=warn and `env` in its environment. */
export function startDev(env: Record<string, string>, runs: DevRun[]): DevRun {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'devstack', 'dev.ts')], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const run: DevRun = {
    pid: child.pid!,
    output: () => output,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    seen: [],
    logsDir: env.DEV_STATE_DIR && path.join(env.DEV_STATE_DIR, 'logs'),
  };
  runs.push(run);
  return run;
}

/** Waits for the banner's last line (failing with the output and the logs' tails if the stack stops first). */
export async function waitUntilRunning(run: DevRun): Promise<void> {
  let exitCode: number | null | undefined;
  void run.exited.then((c) => (exitCode = c));
  await waitFor(
    'npm run dev to print its URLs',
    () => {
      if (exitCode !== undefined)
        throw new Error(`dev exited early (code ${exitCode}):\n${run.output()}${logTails(run.logsDir)}`);
      return run.output().includes('Press Ctrl-C to stop.');
    },
    { timeoutMs: 180_000, intervalMs: 200 },
  );
  run.seen = processTree(run.pid);
}

/** The last lines of every log the stack wrote: the test's folder is gone by the time anyone reads CI's output. */
export function logTails(logsDir: string | undefined): string {
  if (!logsDir || !fs.existsSync(logsDir)) return '';
  return fs
    .readdirSync(logsDir)
    .map((file) => {
      const lines = fs.readFileSync(path.join(logsDir, file), 'utf8').trimEnd().split('\n');
      return `\n--- ${file} (last lines) ---\n${lines.slice(-30).join('\n')}`;
    })
    .join('');
}

/** SIGINT to the group, then: exit code 0, and no process of the stack left, by pid or by process group. */
export async function stopAndExpectNothingLeft(run: DevRun): Promise<void> {
  process.kill(-run.pid, 'SIGINT');
  expect(await run.exited).toBe(0);
  expect(run.output()).toContain('[stepwise] stopped');
  const pids = run.seen.map((p) => p.pid);
  const groups = [...new Set(run.seen.map((p) => p.pgid))];
  await waitFor('every process of the stack to be gone', () => survivors(pids, groups).length === 0, {
    timeoutMs: 10_000,
  });
}

/** Only when an assertion failed half-way: kills whatever these runs started, by pid and process group. */
export function killLeftovers(runs: DevRun[]): void {
  for (const run of runs) {
    const procs = [...run.seen, ...processTree(run.pid)];
    for (const p of survivors(
      procs.map((s) => s.pid),
      [...new Set(procs.map((s) => s.pgid))],
    )) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

/** The value the banner prints after `label` (`Demo API key`, `API`, …). */
export const printed = (run: DevRun, label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(run.output())?.[1];

/** The banner's `export NAME=value` lines, as a shell would run them. */
export function exportLines(run: DevRun): string[] {
  return [...run.output().matchAll(/^\[stepwise\]\s+(export [A-Z_]+=\S+)$/gm)].map((m) => m[1]!);
}
