/** Runs a TypeScript entrypoint of the repo as a real child process (`node --import tsx <file> …`). */
import { execFile } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runTs(
  file: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, file), ...args],
      // PATH and HOME only from the parent: configuration reaches the child exactly as given.
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        timeout: timeoutMs,
      },
      (err, stdout, stderr) => {
        // A non-zero exit is a result to assert on; only a failure to run (or a timeout kill) rejects.
        if (err && typeof err.code !== 'number') return reject(new Error(`${file} did not run: ${err.message}`));
        resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
  });
}
